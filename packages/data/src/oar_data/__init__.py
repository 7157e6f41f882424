"""oar-data: readers, batching, PyReader / DataLoader, DataFeeder and datasets for oar."""

__version__ = "0.1.0"
