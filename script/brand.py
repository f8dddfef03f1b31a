"""Draw Assist Memory's brand images into custom_components/memory/brand/.

Home Assistant (2026.10) and HACS show a custom integration's own
`brand/` images before looking in the brands repository, whose `memory`
folder belongs to another project. The icon is a speech bubble (Assist)
holding a bookmark (something kept); the logo adds the name beside it.

    ../shared/py314/run .venv/bin/python script/brand.py

Sizes follow the brands repository's rules: icons square (256 and 512 px),
logos 128 and 256 px high, transparent background, trimmed, optimised PNG.
`dark_logo*` has light lettering for dark themes; the icon needs no dark
variant (its bubble is opaque). Running it again writes identical files.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

BRAND = Path(__file__).parents[1] / "custom_components" / "memory" / "brand"
# Home Assistant's own blue, so the icon sits well next to core integrations.
BUBBLE = (3, 169, 244, 255)
MARK = (255, 255, 255, 255)
TEXT_LIGHT_THEME = (33, 33, 33, 255)
TEXT_DARK_THEME = (225, 225, 225, 255)
NAME = "Assist Memory"
SUPERSAMPLE = 4  # draw large, then scale down: smooth edges without anti-aliasing


def draw_icon(size: int) -> Image.Image:
    """Draw the speech bubble with a bookmark, filling a size x size square."""
    big = size * SUPERSAMPLE
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)

    def at(x: float, y: float) -> tuple[float, float]:
        return (x * big, y * big)

    # The bubble spans the whole width; its tail reaches the bottom edge.
    draw.rounded_rectangle((*at(0, 0.02), *at(1, 0.80)), radius=0.2 * big, fill=BUBBLE)
    draw.polygon([at(0.20, 0.70), at(0.46, 0.70), at(0.16, 0.98)], fill=BUBBLE)
    # The bookmark: a ribbon with a notch, rounded at the top.
    left, right, top, bottom, notch = 0.36, 0.64, 0.17, 0.66, 0.55
    draw.rounded_rectangle(
        (*at(left, top), *at(right, top + 0.12)), radius=0.04 * big, fill=MARK
    )
    draw.polygon(
        [
            at(left, top + 0.06),
            at(right, top + 0.06),
            at(right, bottom),
            at(0.5, notch),
            at(left, bottom),
        ],
        fill=MARK,
    )
    return image.resize((size, size), Image.Resampling.LANCZOS)


def draw_logo(height: int, text: tuple[int, int, int, int]) -> Image.Image:
    """Draw the icon with the name beside it, trimmed, `height` pixels high."""
    big = height * SUPERSAMPLE
    # Pillow's bundled font, so every machine draws the same letters.
    font = ImageFont.load_default(size=int(big * 0.46))
    left, top, right, bottom = (int(edge) for edge in font.getbbox(NAME))
    gap = int(big * 0.22)
    canvas = Image.new("RGBA", (big + gap + right, big), (0, 0, 0, 0))
    canvas.alpha_composite(draw_icon(height).resize((big, big)), (0, 0))
    draw = ImageDraw.Draw(canvas)
    # Centre the letters on the bubble (which sits above the tail).
    bubble_middle = 0.41 * big
    draw.text(
        (big + gap - left, bubble_middle - (top + bottom) / 2),
        NAME,
        font=font,
        fill=text,
    )
    # Trim the space the font leaves after the last letter.
    box = canvas.getbbox() or (0, 0, canvas.width, big)
    canvas = canvas.crop((0, 0, box[2], big))
    width = round(canvas.width * height / big)
    return canvas.resize((width, height), Image.Resampling.LANCZOS)


def save(image: Image.Image, name: str) -> None:
    """Write an optimised PNG without metadata that would change between runs."""
    image.save(BRAND / name, format="PNG", optimize=True)
    print(f"brand: {name} {image.width}x{image.height}")


def main() -> None:
    """Write every brand image."""
    BRAND.mkdir(exist_ok=True)
    save(draw_icon(256), "icon.png")
    save(draw_icon(512), "icon@2x.png")
    save(draw_logo(128, TEXT_LIGHT_THEME), "logo.png")
    save(draw_logo(256, TEXT_LIGHT_THEME), "logo@2x.png")
    save(draw_logo(128, TEXT_DARK_THEME), "dark_logo.png")
    save(draw_logo(256, TEXT_DARK_THEME), "dark_logo@2x.png")


if __name__ == "__main__":
    main()
