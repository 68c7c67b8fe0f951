"""The report's figures, drawn with matplotlib, each saved as PNG and SVG.

One look for all of them: the Okabe-Ito palette (told apart under every
common colour-vision deficiency) with a marker per series as well, so that a
figure printed in grey still reads; fonts sized for a figure pasted at the
width of a page; titles, axis labels with units, and a legend on every
figure. Every data series is an SVG group whose id starts with "series-",
so that tests (and anyone) can count them.
"""

import os
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FuncFormatter, MaxNLocator, NullLocator, PercentFormatter)

# Okabe & Ito, "Color Universal Design" (2008): blue, orange, bluish green,
# vermillion, reddish purple, sky blue, yellow, black.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
# Time categories of the stacked bars, in a fixed colour each.
TIME_PARTS = [("compute", "#0072B2"), ("communication", "#E69F00"), ("waiting", "#CC79A7"),
              ("checkpoint", "#009E73"), ("input", "#D55E00")]

STYLE = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 11,
    "legend.fontsize": 9.5,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "figure.titlesize": 13,
    "figure.titleweight": "bold",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2,
    "lines.markersize": 6,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    # SVG text stays text (smaller, searchable); ids are stable across runs.
    "svg.fonttype": "none",
    "svg.hashsalt": "distlab",
}


class Figure:
    """A figure being drawn: counts its series and saves itself twice."""

    def __init__(self, name, title, panels=1, columns=None, size=None):
        plt.rcParams.update(STYLE)
        self.name = name
        self.title = title
        self.series = 0
        columns = columns or min(panels, 2)
        rows = (panels + columns - 1) // columns
        width, height = size or (6.4 * columns if columns > 1 else 7.2, 4.2 * rows)
        self.fig, axes = plt.subplots(rows, columns, figsize=(width, height), squeeze=False)
        self.axes = [ax for row in axes for ax in row]
        for ax in self.axes[panels:]:
            ax.set_visible(False)
        self.axes = self.axes[:panels]
        self.legend_rows = 0  # rows of a legend under the panels
        if panels > 1:  # one panel: its own title is the figure's
            self.fig.suptitle(title)

    def tag(self, artists):
        """Marks one data series (a line, or the bars of one category)."""
        self.series += 1
        if not isinstance(artists, (list, tuple)):
            artists = [artists]
        for i, artist in enumerate(artists):
            artist.set_gid(f"series-{self.series}" + (f"-{i}" if len(artists) > 1 else ""))

    def legend_below(self, ax, columns=None):
        """One legend for every panel, under them: the series of `ax` are every panel's."""
        handles, labels = ax.get_legend_handles_labels()
        columns = columns or len(labels)
        self.fig.legend(handles, labels, loc="lower center", ncol=columns, frameon=False)
        self.legend_rows = (len(labels) + columns - 1) // columns

    def save(self, folder):
        height = self.fig.get_size_inches()[1]
        self.fig.tight_layout(rect=(0, min(0.4, 0.3 * self.legend_rows / height), 1, 1))
        paths = []
        for extension in ("png", "svg"):
            path = os.path.join(folder, f"{self.name}.{extension}")
            self.fig.savefig(path, metadata={"Date": None} if extension == "svg" else None)
            paths.append(path)
        plt.close(self.fig)
        return paths


def style_of(index):
    # Markers shift by one every time the colours come round, so that series
    # 1 and 9 differ.
    return {"color": PALETTE[index % len(PALETTE)],
            "marker": MARKERS[(index + index // len(PALETTE)) % len(MARKERS)]}


def percent_axis(ax):
    # Fractions as percentages, with as many decimals as the range needs.
    ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=None))


def si_axis(ax):
    """1,500,000 as 1.5M: axes of examples/s and bytes."""
    def short(y, _):
        for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(y) >= scale:
                return f"{y / scale:g}{suffix}"
        return f"{y:g}"
    ax.yaxis.set_major_formatter(FuncFormatter(short))


def metric_lines(fig, ax, x_label, metric, series, numeric_x, categories=None, legend=True):
    """One panel: a metric against a varied key, one line (or bar group) per
    series. `series` is [(label, [(x, y), ...])]."""
    label, unit, kind = metric
    drawn = False
    if numeric_x:
        for i, (name, points) in enumerate(series):
            points = sorted((x, y) for x, y in points if y is not None)
            if not points:
                continue
            (line,) = ax.plot([p[0] for p in points], [p[1] for p in points], label=name,
                              **style_of(i))
            fig.tag(line)
            drawn = True
        xs = sorted({x for _, points in series for x, _ in points})
        if xs and xs[0] > 0 and xs[-1] / xs[0] >= 8:
            # Doublings (workers 1..16, intervals 25..1600) evenly spaced.
            ax.set_xscale("log", base=2)
            ax.xaxis.set_minor_locator(NullLocator())
        if xs and len(xs) <= 12:
            ax.set_xticks(xs)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    else:
        width = 0.8 / max(1, len(series))
        for i, (name, points) in enumerate(series):
            by_x = {x: y for x, y in points}
            heights = [by_x.get(c) for c in categories]
            positions = [k + (i - (len(series) - 1) / 2) * width for k in range(len(categories))]
            kept = [(p, h) for p, h in zip(positions, heights) if h is not None]
            if not kept:
                continue
            bars = ax.bar([p for p, _ in kept], [h for _, h in kept], width=width, label=name,
                          color=PALETTE[i % len(PALETTE)], edgecolor="white")
            fig.tag(list(bars))
            drawn = True
        ax.set_xticks(range(len(categories)))
        # Long values (a list of slow tasks, a strategy's options) wrapped
        # onto lines of their own rather than slanted into each other.
        ax.set_xticklabels([textwrap.fill(c, 18) for c in categories], fontsize="small"
                           if max(map(len, categories)) > 18 else None)
    ax.set_title(label)
    ax.set_xlabel(x_label)
    ax.set_ylabel(unit)
    if kind == "percent":
        percent_axis(ax)
    elif kind == "si":
        si_axis(ax)
    if drawn:
        ax.set_ylim(bottom=0)
        if legend and len(series) > 1:  # one series needs no legend: the title says it
            ax.legend(loc="best", frameon=False)
    else:
        ax.text(0.5, 0.5, "no data in these runs", ha="center", va="center",
                transform=ax.transAxes, color="#555555")
    return drawn


def time_bars(fig, ax, title, rows, unit):
    """Stacked bars of one run: compute, communication, waiting, checkpoint
    and input seconds per task (or per role, for large clusters); a part no
    task has (checkpoint, input) is left out of the legend."""
    names = [r[0] for r in rows]
    bottoms = [0.0] * len(rows)
    for k, (part, colour) in enumerate(TIME_PARTS):
        heights = [r[k + 1] for r in rows]
        if part in ("checkpoint", "input") and not any(heights):
            continue
        bars = ax.bar(range(len(rows)), heights, bottom=bottoms, color=colour, label=part,
                      edgecolor="white", linewidth=0.5)
        fig.tag(list(bars))
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=30 if len(rows) > 4 else 0, ha="right" if len(rows) > 4
                       else "center")
    ax.set_title(title)
    ax.set_ylabel(unit)


def curves(fig, ax, series, x_label, y_label, title, percent=False, dashed=(),
           integer_x=False):
    """Lines of (x, y) points, one per series; series named in `dashed` are
    drawn dashed (simulated beside real)."""
    drawn = False
    for i, (name, points, colour_index) in enumerate(series):
        if not points:
            continue
        style = style_of(colour_index)
        (line,) = ax.plot([p[0] for p in points], [p[1] for p in points], label=name,
                          linestyle="--" if name in dashed else "-",
                          markevery=max(1, len(points) // 12), **style)
        fig.tag(line)
        drawn = True
    ax.set_title(title)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if percent:
        percent_axis(ax)
    if integer_x:  # steps: no tick between two of them
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if drawn:
        # Long enough handles that a dashed line reads as dashed.
        ax.legend(loc="best", frameon=False, handlelength=3.5)
    return drawn
