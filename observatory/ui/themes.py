"""Display themes for teaching: a high-contrast projector theme and a colour-blind-safe theme.

Both are ordinary Textual themes: registered on the app, they are listed in the command palette's theme picker
(ctrl+p, *Theme*) beside Textual's own, and ``OBSERVATORY_UI__THEME`` picks one at start.

The panes write their meaning in Rich's named colours (green: fits, Ready, 2xx, live; red: refused, NotReady, 4xx,
stale; yellow: waiting for someone, a warning; magenta: held back; cyan: bound and on its way), which Textual maps
to true colours through the app's ANSI terminal theme. Each theme here carries its own ANSI mapping, built from the
same colours as its ``$success``, ``$error``, ``$warning`` … variables (:func:`ansi_palette`), so one theme changes
both what the stylesheet paints and what the panes paint. Textual's own themes keep Textual's mapping.
"""

from __future__ import annotations

from rich.terminal_theme import TerminalTheme
from textual.color import Color
from textual.theme import BUILTIN_THEMES, Theme

__all__ = ["COLORBLIND", "DEFAULT_THEME", "OBSERVATORY_THEMES", "PROJECTOR", "ansi_palette", "theme_names",
           "theme_problem"]

DEFAULT_THEME = "textual-dark"
"""The theme the app starts with unless ``OBSERVATORY_UI__THEME`` names another."""

PROJECTOR = Theme(
    name="observatory-projector",
    primary="#FFFFFF",
    secondary="#00E5FF",
    accent="#FFD600",
    warning="#FFD600",
    error="#FF4F4F",
    success="#00E676",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#202020",
    boost="#303030",
    dark=True,
    luminosity_spread=0.1,
    text_alpha=1.0,
    variables={
        "ansi-magenta": "#FF66FF",
        "ansi-cyan": "#00E5FF",
        "ansi-blue": "#66A3FF",
        "border": "#FFFFFF",
        "border-blurred": "#FFFFFF",
        "footer-key-foreground": "#FFD600",
        "footer-description-foreground": "#FFFFFF",
        "block-cursor-background": "#FFD600",
        "block-cursor-foreground": "#000000",
        "block-cursor-text-style": "bold",
        "input-selection-background": "#FFD600 60%",
    },
)
"""Black background, white text, saturated colours a washed-out projector still shows; the stylesheet draws heavy
pane borders under it (``.-theme-observatory-projector`` in styles/app.tcss)."""

# Okabe & Ito, "Color Universal Design" (2008): eight colours told apart with any common colour-vision deficiency.
OKABE_ITO = {"orange": "#E69F00", "sky-blue": "#56B4E9", "bluish-green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "reddish-purple": "#CC79A7"}

COLORBLIND = Theme(
    name="observatory-colorblind",
    primary=OKABE_ITO["blue"],
    secondary=OKABE_ITO["reddish-purple"],
    accent=OKABE_ITO["orange"],
    warning=OKABE_ITO["yellow"],
    error=OKABE_ITO["vermillion"],
    success=OKABE_ITO["sky-blue"],
    foreground="#F0F0F0",
    background="#101010",
    surface="#1C1C1C",
    panel="#262626",
    dark=True,
    variables={
        "ansi-magenta": OKABE_ITO["reddish-purple"],
        "ansi-cyan": OKABE_ITO["bluish-green"],
        "ansi-blue": OKABE_ITO["blue"],
        "footer-key-foreground": OKABE_ITO["orange"],
        "block-cursor-background": OKABE_ITO["blue"],
    },
)
"""The Okabe–Ito palette: good news in sky blue and bad news in vermillion (never a red/green pair), warnings in
yellow, held-back pods in reddish purple, bound pods on their way in bluish green."""

OBSERVATORY_THEMES = (PROJECTOR, COLORBLIND)


def _rgb(color: str) -> tuple[int, int, int]:
    parsed = Color.parse(color)
    return parsed.r, parsed.g, parsed.b


def ansi_palette(theme: Theme) -> TerminalTheme:
    """The ANSI colours of ``theme``'s panes: red is its ``error``, green its ``success``, yellow its ``warning``,
    blue, magenta and cyan its ``ansi-blue`` / ``ansi-magenta`` / ``ansi-cyan`` variables (else ``primary``,
    ``secondary``, ``accent``); black and white its background and foreground. Bright colours are the same."""
    variables = theme.variables
    background = theme.background or "#000000"
    foreground = theme.foreground or "#FFFFFF"
    normal = [_rgb(background),
              _rgb(theme.error or "#FF0000"),
              _rgb(theme.success or "#00FF00"),
              _rgb(theme.warning or "#FFFF00"),
              _rgb(variables.get("ansi-blue", theme.primary)),
              _rgb(variables.get("ansi-magenta", theme.secondary or theme.primary)),
              _rgb(variables.get("ansi-cyan", theme.accent or theme.primary)),
              _rgb(foreground)]
    bright = [_rgb("#808080"), *normal[1:7], _rgb(foreground)]
    return TerminalTheme(_rgb(background), _rgb(foreground), normal, bright)


ANSI_PALETTES = {theme.name: ansi_palette(theme) for theme in OBSERVATORY_THEMES}
"""Theme name -> its ANSI mapping, for observatory's own themes."""


def theme_names() -> list[str]:
    """Every theme a setting may name: Textual's built-in themes and observatory's, sorted."""
    return sorted({*BUILTIN_THEMES, *(theme.name for theme in OBSERVATORY_THEMES)})


def theme_problem(name: str) -> str | None:
    """The one-line message for ``OBSERVATORY_UI__THEME=name`` when no such theme exists, else None."""
    if name in theme_names():
        return None
    return (f"observatory: OBSERVATORY_UI__THEME: there is no theme {name!r}; the themes are: "
            f"{', '.join(theme_names())}")
