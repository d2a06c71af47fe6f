"""The report's figures. Each function returns a ``matplotlib.figure.Figure`` (no pyplot); ``save_figure`` writes
PNG + SVG."""
from .generalization import generalization_figure, generalization_series
from .heatmap import heatmap_data, heatmap_figure, sampling_share
from .learning import learning_curves_figure
from .sampler_dynamics import sampler_dynamics_figure
from .sampler_state import sampler_state_figure
from .sampling import sampling_histograms_figure
from .style import save_figure

__all__ = ["generalization_figure", "generalization_series", "heatmap_data", "heatmap_figure",
           "learning_curves_figure", "sampler_dynamics_figure", "sampler_state_figure", "sampling_histograms_figure",
           "sampling_share", "save_figure"]
