"""The Textual app: panes, screens and widgets. Never imports kubernetes_asyncio."""
