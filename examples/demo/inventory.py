"""A tiny stock keeper with a few real problems for the validators to find."""

import os
import json


def add_item(name, quantity, stock={}):
    stock[name] = stock.get(name, 0) + quantity
    return stock


def load(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except:
        return {}


def total(stock):
    # FIXME: negative quantities should be rejected, not summed.
    return sum(stock.values()) + adjustment
