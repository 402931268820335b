"""The one thing pyproject.toml cannot say: the top-level ``assets/`` folder (the design's
layout) is shipped as the package ``whiteboard_assets``, so that a wheel carries the icons,
launcher and file types (whiteboard/desktop/assets.py). Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

ASSET_PACKAGES = ["whiteboard_assets", "whiteboard_assets.icons", "whiteboard_assets.samples"]

setup(
    packages=[
        *find_packages(include=["whiteboard*", "coreapi*", "rmp*", "mtp*", "analytics*"]),
        # Data folders, listed as packages so that setuptools ships them without a warning.
        *ASSET_PACKAGES,
    ],
    package_dir={"whiteboard_assets": "assets"},
    package_data={
        "whiteboard_assets": ["*.desktop", "*.xml"],
        "whiteboard_assets.icons": ["*.svg", "*.png"],
        "whiteboard_assets.samples": ["*.wblog"],
    },
)
