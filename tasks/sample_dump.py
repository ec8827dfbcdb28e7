"""A small, self-made Common-Crawl-like dump for the demo, the tests and benchmarks.

Pages are generated from short sentences written for this project, in several languages
and legacy encodings, laid out like real crawls: warcinfo, then request / response /
metadata per capture, each record its own gzip member, with non-200 statuses, non-HTML
types, a wrong header charset, a WARC-Truncated payload and (optionally) a last archive
cut in the middle of a record.
"""
from __future__ import annotations

import gzip
import io
import os
import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SENTENCES = {
    "ja": [
        "今日は朝から雨が降っていたので、駅まで歩くのに少し時間がかかりました。",
        "この町の図書館では、毎週土曜日に子ども向けの読み聞かせの会が開かれています。",
        "新しいパン屋さんが近所にできたので、週末に家族と一緒に行ってみました。",
        "山の上から見た夕焼けはとてもきれいで、写真を何枚も撮ってしまいました。",
        "会議の資料は明日の午前中までに共有フォルダに置いておいてください。",
        "電車の中で読んでいた小説の結末が気になって、夜遅くまで読み続けてしまった。",
        "春になると川沿いの桜並木を見るために、たくさんの人が訪れます。",
        "料理を始めてから、野菜の値段や季節のことをよく考えるようになりました。",
    ],
    "en": [
        "The committee met on Tuesday to discuss the new schedule for the public library.",
        "After the rain stopped, the children went back outside to finish their game in the park.",
        "It is not always easy to decide which of the many options is the right one for a family.",
        "The museum will be closed for two weeks while the old roof is repaired and painted.",
        "She said that the results of the survey would be published at the end of the month.",
        "Many of the farmers in the valley have started to plant trees along the edges of their fields.",
    ],
    "ru": [
        "В субботу в городском парке прошёл большой праздник для детей и их родителей.",
        "Новая линия метро должна открыться до конца следующего года, сообщили в администрации.",
        "Учёные из университета провели исследование о влиянии погоды на урожай пшеницы.",
        "Вечером на площади выступал оркестр, и многие жители пришли его послушать.",
    ],
    "zh": [
        "今天上午，市图书馆举行了一场关于城市历史的讲座，吸引了很多市民参加。",
        "这家新开的餐厅主要提供本地的家常菜，价格也比较合理。",
        "研究人员表示，这项技术可以在未来几年内大大降低能源的消耗。",
        "周末的时候，很多家庭会带着孩子去公园散步和放风筝。",
    ],
    "de": [
        "Die Stadt plant, im nächsten Jahr einen neuen Radweg entlang des Flusses zu bauen.",
        "Nach dem Konzert gingen die meisten Besucher noch in ein kleines Café am Marktplatz.",
        "Der Bericht zeigt, dass die Zahl der Besucher im Sommer deutlich gestiegen ist.",
    ],
}

# language -> encodings its pages are written in (first is the most common)
ENCODINGS = {
    "ja": ["utf-8", "shift_jis", "euc-jp"],
    "en": ["utf-8", "windows-1252"],
    "ru": ["utf-8", "windows-1251"],
    "zh": ["utf-8", "gbk"],
    "de": ["utf-8", "iso-8859-1"],
}

NAV = {
    "ja": ["ホーム", "お知らせ", "会社概要", "お問い合わせ", "サイトマップ"],
    "en": ["Home", "News", "About us", "Contact", "Sitemap"],
    "ru": ["Главная", "Новости", "О нас", "Контакты"],
    "zh": ["首页", "新闻", "关于我们", "联系我们"],
    "de": ["Startseite", "Aktuelles", "Über uns", "Kontakt"],
}


@dataclass
class Page:
    url: str
    lang: str
    encoding: str
    html: bytes
    status: int = 200
    content_type: str = "text/html"
    truncated: bool = False


def make_page(rnd: random.Random, lang: str, encoding: str, idx: int, host: str) -> Page:
    sents = SENTENCES[lang]
    paras = []
    for _ in range(rnd.randint(2, 5)):
        k = rnd.randint(2, 4)
        paras.append("".join(s if lang in ("ja", "zh") else s + " " for s in rnd.sample(sents, min(k, len(sents)))).strip())
    nav = "".join(f'<li><a href="/{i}">{t}</a></li>' for i, t in enumerate(NAV[lang]))
    body = "".join(f"<p>{p}</p>" for p in paras)
    meta = "" if rnd.random() < 0.2 else f'<meta charset="{encoding}">'
    html = (f"<!DOCTYPE html><html><head>{meta}<title>{sents[0][:20]}</title>"
            f"<style>body{{margin:0}}</style><script>var x = 1;</script></head>"
            f'<body><div id="header" class="nav top"><ul>{nav}</ul></div>'
            f'<div class="content" id="main"><h1>{sents[idx % len(sents)][:24]}</h1>{body}</div>'
            f'<div class="footer">© 2024 {host}</div></body></html>')
    return Page(url=f"http://{host}/{lang}/page{idx}.html", lang=lang, encoding=encoding,
                html=html.encode(encoding, errors="xmlcharrefreplace"))


def _write_capture(writer: WARCWriter, rnd: random.Random, page: Page, when: datetime) -> None:
    date = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    host = page.url.split("/")[2]
    req = writer.create_warc_record(
        page.url, "request",
        payload=io.BytesIO(f"GET /{page.url.split('/', 3)[3]} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()),
        warc_headers_dict={"WARC-Date": date})
    writer.write_record(req)
    ctype = page.content_type
    if page.encoding and rnd.random() < 0.7 and ctype == "text/html":
        ctype += f"; charset={page.encoding}"
    http = StatusAndHeaders(f"{page.status} {'OK' if page.status == 200 else 'Error'}",
                            [("Content-Type", ctype), ("Date", when.strftime("%a, %d %b %Y %H:%M:%S GMT")),
                             ("Content-Length", str(len(page.html)))], protocol="HTTP/1.1")
    headers = {"WARC-Date": date, "WARC-Record-ID": f"<urn:uuid:{uuid.UUID(int=rnd.getrandbits(128))}>"}
    if page.truncated:
        headers["WARC-Truncated"] = "length"
    resp = writer.create_warc_record(page.url, "response", payload=io.BytesIO(page.html),
                                     http_headers=http, warc_headers_dict=headers)
    writer.write_record(resp)
    meta = writer.create_warc_record(page.url, "metadata", payload=io.BytesIO(b"fetchTimeMs: 120\r\n"),
                                     warc_content_type="application/warc-fields",
                                     warc_headers_dict={"WARC-Date": date})
    writer.write_record(meta)


def make_dump(out_dir: str, files: int = 4, pages_per_file: int = 60, seed: int = 7,
              dump: str = "CC-MAIN-2099-01", truncate_last: bool = True,
              languages: dict[str, float] | None = None) -> list[str]:
    """Write ``files`` WARC.gz archives and a ``warc.paths.gz`` under out_dir; returns the paths."""
    languages = languages or {"ja": 0.45, "en": 0.2, "ru": 0.12, "zh": 0.13, "de": 0.1}
    rnd = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    when0 = datetime(2024, 5, 20, tzinfo=timezone.utc)
    langs, weights = zip(*languages.items())
    for f in range(files):
        name = f"{dump}-{f:05d}.warc.gz"
        path = os.path.join(out_dir, name)
        with open(path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            writer.write_record(writer.create_warcinfo_record(name, {"software": "warclake sample", "isPartOf": dump}))
            for i in range(pages_per_file):
                lang = rnd.choices(langs, weights)[0]
                enc = rnd.choice(ENCODINGS[lang])
                page = make_page(rnd, lang, enc, f * pages_per_file + i, f"site{rnd.randint(1, 40)}.example")
                r = rnd.random()
                if r < 0.04:
                    page.status = 404
                elif r < 0.08:
                    page.content_type, page.html = "image/png", b"\x89PNG\r\n\x1a\n" + bytes(rnd.getrandbits(8) for _ in range(64))
                elif r < 0.10:
                    page.truncated = True
                _write_capture(writer, rnd, page, when0 + timedelta(minutes=f * 1000 + i))
        paths.append(path)
    if truncate_last and paths:
        with open(paths[-1], "rb") as fh:
            data = fh.read()
        with open(paths[-1], "wb") as fh:  # cut inside a record, as a broken download would
            fh.write(data[: int(len(data) * 0.7)])
    with gzip.open(os.path.join(out_dir, "warc.paths.gz"), "wt") as fh:
        for p in paths:
            fh.write(os.path.basename(p) + "\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m warclake.tasks.sample_dump",
                                 description="Write a small generated Common-Crawl-like dump: archives "
                                             "and a warc.paths.gz listing.")
    ap.add_argument("out_dir", help="folder to write (created)")
    ap.add_argument("--files", type=int, default=4, help="archives (default: 4)")
    ap.add_argument("--pages", type=int, default=60, help="pages per archive (default: 60)")
    ap.add_argument("--seed", type=int, default=7, help="random seed (default: 7)")
    ap.add_argument("--dump", default="CC-MAIN-2099-01", help="dump name in the archives' names")
    ap.add_argument("--whole", action="store_true", help="do not cut the last archive short")
    args = ap.parse_args(argv)
    paths = make_dump(args.out_dir, files=args.files, pages_per_file=args.pages, seed=args.seed,
                      dump=args.dump, truncate_last=not args.whole)
    print(f"{len(paths)} archives and warc.paths.gz in {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
