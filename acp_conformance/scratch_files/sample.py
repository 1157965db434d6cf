# ACP conformance sample: every target follows non-ASCII text on its line.
greeting = "héllo wörld 😀 ✓"; required_target = 1
note = "日本語 🎉 𝄞"; informational_target = 2
tabs = "\t→"; toggle_target = 3
