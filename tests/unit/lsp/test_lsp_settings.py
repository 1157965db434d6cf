from lsp_server.advertised import unwrap_section
from lsp_server.settings import RunOn, Settings, parse_settings, settings_schema


def test_defaults_when_nothing_sent() -> None:
    assert parse_settings(None) == (Settings(), None)
    settings = Settings()
    assert settings.run_on is RunOn.SAVE
    assert settings.debounce_ms == 500
    assert settings.clear_on_edit is False


def test_camel_case_wire_names() -> None:
    settings, message = parse_settings({"runOn": "change", "debounceMs": 200, "clearOnEdit": True})
    assert message is None
    assert settings == Settings(run_on=RunOn.CHANGE, debounce_ms=200, clear_on_edit=True)


def test_invalid_field_falls_back_alone_and_is_named_once() -> None:
    settings, message = parse_settings(
        {"runOn": "sometimes", "debounceMs": -5, "clearOnEdit": True}
    )
    assert settings.run_on is RunOn.SAVE
    assert settings.debounce_ms == 500
    assert settings.clear_on_edit is True  # the valid field is kept
    assert message is not None
    assert "acp.runOn" in message and "acp.debounceMs" in message
    assert message.count("\n") == 0


def test_not_an_object() -> None:
    settings, message = parse_settings(["runOn"])
    assert settings == Settings()
    assert message is not None and "list" in message


def test_unknown_keys_ignored() -> None:
    assert parse_settings({"futureThing": 1}) == (Settings(), None)


def test_initialization_options_may_nest_under_acp() -> None:
    assert unwrap_section({"acp": {"runOn": "manual"}}) == {"runOn": "manual"}
    assert unwrap_section({"runOn": "manual"}) == {"runOn": "manual"}


def test_schema_has_descriptions_for_every_field() -> None:
    properties = settings_schema()["properties"]
    assert set(properties) == {"runOn", "debounceMs", "clearOnEdit", "unsafeFixes", "progress"}
    assert all(prop.get("description") for prop in properties.values())
