"""How a benchmark script ends: its result lines printed, and written to
the --markdown file when one is given (the docs/results pages)."""


def page(lines, title, intro):
    """A results page: a heading, what the script measures, and its output
    as printed, in a fenced block (so a rerun rewrites the whole page)."""
    return f"# {title}\n\n{intro}\n\n```\n" + "\n".join(lines) + "\n```\n"


def emit(lines, markdown=None, title=None, intro=None):
    """Prints `lines` as one text, and writes it to `markdown`: as it is,
    or as a whole page (see `page`) when a title is given."""
    text = "\n".join(lines) + "\n"
    print(text)
    if markdown:
        with open(markdown, "w") as f:
            f.write(page(lines, title, intro) if title else text)
