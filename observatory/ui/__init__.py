"""The Textual app. Never imports kubernetes_asyncio; it sees a :class:`~observatory.model.source.Source`.

* :mod:`.app`: :class:`~.app.ObservatoryApp`, around :mod:`.main_screen` (:class:`~.main_screen.MainScreen`: the
  panes, the repaint, the keys of :mod:`.keys`, the workers).
* The features, each a controller with a host protocol (what it needs from the screen): :mod:`.scope`,
  :mod:`.binding`, :mod:`.why`, :mod:`.permissions`, :mod:`.scheduler`, :mod:`.lesson`, :mod:`.teaching`, and the
  app's :mod:`.replay_keys`. :mod:`.host` holds the panes and the shared protocols; :mod:`.areas` the repaint's
  areas; :mod:`.palette` the command palette's provider.
* :mod:`.widgets` (one pane per file) and :mod:`.screens` (the modals).
"""
