"""Maps the top-level folders of the repository (SPEC §1) onto the `swedeck` package.

`core/` installs as `swedeck.core`, `tui/` as `swedeck.tui`, and so on, so that the
checkout keeps the layout the spec fixes while the installed names cannot collide with
other distributions. Metadata lives in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {"swedeck": "swedeck", "core": "swedeck.core", "tui": "swedeck.tui",
           "themes": "swedeck.themes", "configs": "swedeck.configs"}
DATA = ["*.yaml", "*.tcss", "*.md", "*.json", "*.jsonl", "demo/**/*", "**/*.tcss", "page/*"]

packages, package_dir = [], {}
for folder, name in FOLDERS.items():
    packages.append(name)
    package_dir[name] = folder
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=package_dir, package_data={name: DATA for name in packages})
