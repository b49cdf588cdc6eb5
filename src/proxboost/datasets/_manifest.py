"""The one table of remote files: names, sha256 checksums and download URLs.

It mirrors ``manifest.json`` of the project's dataset mirror (``../shared/datasets``),
restricted to the files a public URL serves. For every file the URLs are tried in order:
the canonical source first, then a public copy pinned to a commit that served exactly these
bytes. A download is accepted only if its sha256 matches.

Files of the mirror that are *not* listed here, on purpose:

- ``bostonhousing/BostonHousing.csv`` and ``sniffer/sniffer.csv`` were derived for the mirror
  (``public: false``): no public URL serves those bytes, so the loaders read the public
  originals ``Boston.csv`` and ``sniffer.rda`` instead.
- ``engel/engel_statsmodels.csv``: a second copy of ``engel.csv`` (statsmodels wheel), no URL.
- ``adult/adult.test``: not used (the paper's n = 30162 is the complete rows of adult.data).

``ad.data`` has no checksum (no complete copy could be obtained to hash it): it is accepted
only after its size check after preprocessing (``n = 2359``, ``d = 1558``) and recorded as
unverified.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RemoteFile", "FILES"]


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset, as stored in the cache and the mirror.

    Attributes
    ----------
    name : str
        File name; stored as ``<root>/<dataset id>/<name>`` in the cache and the mirror.
    sha256 : str or None
        Expected sha256 (hex) of the bytes; None when no reference copy exists (``ad.data``).
    urls : tuple of str
        Download URLs, canonical source first, then a pinned public copy.
    role : {"data", "doc"}
        "data" files are read by the loaders; "doc" files are descriptions (licences,
        column meanings), fetched only on request (``--prefetch --docs``).
    """

    name: str
    sha256: str | None
    urls: tuple[str, ...]
    role: str = "data"


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_GH = "https://raw.githubusercontent.com"
_RDATASETS = "https://vincentarelbundock.github.io/Rdatasets/csv"
_RDATASETS_PIN = f"{_GH}/vincentarelbundock/Rdatasets/1dcc2bf5f955cc1224a3e1307256e1fe86b68dae/csv"
_WINE_PIN = f"{_GH}/JakubRoks1/DataScienceTask/63b5e545d8f26bbabff238eb2c7a8af5adec3cf7"
_BROWNLEE_PIN = f"{_GH}/jbrownlee/Datasets/d20fcb6402ae34e653d4513b00f39257bb37ed7f"
_SPAM_PIN = f"{_GH}/QuidUtsav/Spam-detector/11bba01389f7e019c57bbd38979686d46ee94cd4"
_AD_PIN = f"{_GH}/smenon8/AdNonAdDataClassifier/f33d3658713619c67e84c1e475989600d00be31a/data"


def _doc(name: str, sha256: str, *urls: str) -> RemoteFile:
    return RemoteFile(name, sha256, tuple(urls), role="doc")


def _data(name: str, sha256: str | None, *urls: str) -> RemoteFile:
    return RemoteFile(name, sha256, tuple(urls), role="data")


_WINE_NAMES = _doc(
    "winequality.names",
    "15d215e73b39105952380fd487e4ce1bf5a6b83a425abb285c2ec55193d3ca92",
    f"{_UCI}/wine-quality/winequality.names",
    f"{_BROWNLEE_PIN}/winequality.names",
)

#: dataset id -> files (the first "data" file is the one its loader reads).
FILES: dict[str, tuple[RemoteFile, ...]] = {
    "whitewine": (
        _data(
            "winequality-white.csv",
            "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836",
            f"{_UCI}/wine-quality/winequality-white.csv",
            f"{_WINE_PIN}/winequality-white.csv",
        ),
        _WINE_NAMES,
    ),
    "redwine": (
        _data(
            "winequality-red.csv",
            "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
            f"{_UCI}/wine-quality/winequality-red.csv",
            f"{_WINE_PIN}/winequality-red.csv",
        ),
        _WINE_NAMES,
    ),
    "bostonhousing": (
        _data(
            "Boston.csv",
            "654ae93c04416defb2b3752951a7f4357d5951c84c02371b80b48a4492337f86",
            f"{_RDATASETS}/MASS/Boston.csv",
            f"{_RDATASETS_PIN}/MASS/Boston.csv",
        ),
        _doc(
            "BostonHousing.rda",
            "10263a9811236eae82c0e2f2ad52568b331b3d8a84d57eeafd5b14c0d4a215ac",
            f"{_GH}/cran/mlbench/a6ad5ce6cccb46dcaa5df2a6e184aaae97077817/data/BostonHousing.rda",
        ),
    ),
    "crabs": (
        _data(
            "crabs.csv",
            "d643a70456ee5bd8a10b434416f0941615ea5a0adf208263ca25a49407c24b60",
            f"{_RDATASETS}/MASS/crabs.csv",
            f"{_RDATASETS_PIN}/MASS/crabs.csv",
        ),
    ),
    "engel": (
        _data(
            "engel.csv",
            "9af578624f649277f7ff4f3b248c274714c435601a39f8be73cc208cfb4101ea",
            f"{_RDATASETS}/quantreg/engel.csv",
            f"{_RDATASETS_PIN}/quantreg/engel.csv",
        ),
    ),
    "sniffer": (
        _data(
            "sniffer.rda",
            "b10d1cdb60b88785ea59b80bfc99ebf03579bfab502785628c2427f6cdd42d49",
            f"{_GH}/cran/alr4/d2baa6f3346b19e57cede257d8caa6c32c5bf597/data/sniffer.rda",
        ),
    ),
    "adult": (
        _data(
            "adult.data",
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            f"{_UCI}/adult/adult.data",
            f"{_BROWNLEE_PIN}/adult-train.csv",
        ),
        _doc(
            "adult.names",
            "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
            f"{_UCI}/adult/adult.names",
            f"{_BROWNLEE_PIN}/adult.names",
        ),
    ),
    "spam": (
        _data(
            "spambase.data",
            "b1ef93de71f97714d3d7d4f58fc9f718da7bbc8ac8a150eff2778616a8097b12",
            f"{_UCI}/spambase/spambase.data",
            f"{_SPAM_PIN}/spambase.data",
        ),
        _doc(
            "spambase.names",
            "d50d7f2ada06652f87856f86c333c7945c203178bace0d6517b3d10e8cde74f3",
            f"{_UCI}/spambase/spambase.names",
            f"{_SPAM_PIN}/spambase.names",
        ),
        _doc(
            "spambase.DOCUMENTATION",
            "462e4ffba1241a5962d528364708d188dc75931d56a25a8e9b6c8bb25e094cfd",
            f"{_UCI}/spambase/spambase.DOCUMENTATION",
            f"{_SPAM_PIN}/spambase.DOCUMENTATION",
        ),
    ),
    "advertisements": (
        _data("ad.data", None, f"{_UCI}/internet_ads/ad.data"),
        _doc(
            "ad.names",
            "74ef40720a61888c2fe9ab36b4a638aad4cefe841d114b6fc5b98d4ac0b25077",
            f"{_UCI}/internet_ads/ad.names",
            f"{_AD_PIN}/ad.names",
        ),
        _doc(
            "ad.DOCUMENTATION",
            "3a1ed5d62f62506ec756af0015bc2727e6fd7d39a6bd120e2f0d60271b14c8fd",
            f"{_UCI}/internet_ads/ad.DOCUMENTATION",
            f"{_AD_PIN}/ad.DOCUMENTATION",
        ),
    ),
}
