"""The paragraph: the unit every later stage (language, boilerplate, lake) works on."""
from dataclasses import dataclass

PATH_SEP = "\x1c"     # between a paragraph's CSS path and its text
LINK_START = "\x02"   # before link text
LINK_END = "\x03"     # after link text
PARA_SEP = "\n\n"     # between paragraphs


@dataclass(slots=True)
class Paragraph:
    path: str         # CSS path from body to the block tag, e.g. "body>div.content#main>p"
    text: str         # normalised text; link text wrapped in \x02...\x03; <br> kept as \n
    n_tags: int = 0   # element start tags seen since the previous paragraph ended (markup weight)

    @property
    def tag(self) -> str:
        """The block tag's name (the right-most element of the path)."""
        last = self.path.rsplit(">", 1)[-1]
        for sep in (".", "#"):
            last = last.split(sep, 1)[0]
        return last

    @property
    def plain(self) -> str:
        """Text without link markers."""
        return self.text.replace(LINK_START, "").replace(LINK_END, "")

    def link_chars(self) -> int:
        """Characters inside link markers."""
        n, inside = 0, False
        for ch in self.text:
            if ch == LINK_START:
                inside = True
            elif ch == LINK_END:
                inside = False
            elif inside:
                n += 1
        return n


def join_paragraphs(paragraphs: list[Paragraph]) -> str:
    """The Uzushio ``text`` column: ``path\\x1ctext`` paragraphs joined by blank lines."""
    return PARA_SEP.join([f"{p.path}{PATH_SEP}{p.text}" for p in paragraphs])


def split_document(text: str) -> list[Paragraph]:
    """Inverse of :func:`join_paragraphs` (n_tags is not stored, so it is 0)."""
    out = []
    for chunk in text.split(PARA_SEP) if text else []:
        path, _, body = chunk.partition(PATH_SEP)
        out.append(Paragraph(path, body))
    return out
