"""rsp-sdk: benchmark RDF Stream Processing engines for correctness and performance.

The public API is re-exported from the subpackages; importing ``rsp_sdk`` itself stays cheap
(no Spark, no JVM) so that command-line tools and adapters start fast.
"""

from rsp_sdk.errors import InputError, RspError

__version__ = "0.1.0"

__all__ = ["InputError", "RspError", "__version__"]
