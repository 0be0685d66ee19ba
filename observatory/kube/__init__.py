"""The only package that imports kubernetes_asyncio: connecting, reflectors and the Binding POST."""
