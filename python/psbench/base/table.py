"""Plain fixed-width text tables."""


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
        return True
    except ValueError:
        return False


def render(headers: list[str], rows: list[list], indent: str = "") -> str:
    """Columns as wide as their widest cell; numbers right-aligned, text left-aligned."""
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    numeric = [
        all(_is_number(row[i]) or row[i] in ("", "-") for row in cells)
        and any(_is_number(row[i]) for row in cells)
        for i in range(len(headers))
    ]

    def line(row: list[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric)]
        return (indent + "  ".join(parts)).rstrip()

    out = [line(headers), indent + "  ".join("-" * w for w in widths)]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def key_values(pairs: list[tuple[str, object]], indent: str = "") -> str:
    """Two columns: a name and its value."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{indent}{k.ljust(width)}  {'-' if v is None else v}" for k, v in pairs)
