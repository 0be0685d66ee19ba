"""The main screen (:mod:`.main`) and the modal screens: choosing a node or namespace, confirming a bind, the key
list, the raw message, the equivalent commands, the transcript export."""
