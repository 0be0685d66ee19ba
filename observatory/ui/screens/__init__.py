"""The modal screens: choosing a node or namespace, confirming a bind, the key list, the raw message, the
equivalent commands, the transcript export. The main screen is :mod:`observatory.ui.main_screen`; it and the feature
controllers push these, and nothing here imports them back."""
