"""setup.py — builds recordio._core, the CPython extension over librecordio.

Where librecordio comes from (RECORDIO_LIBRARY=auto|source|system):
  source  compile the library's own C files (../recordio, ../loader, ../lib)
          into the extension, with the defines configure would detect
          (ISA-L, liburing, CUDA under $CUDA_HOME or /usr/local/cuda);
  system  link the installed library that `pkg-config recordio` finds;
  auto    (default) source when this package sits in the recordio
          repository, else system. The repository's sources are preferred so
          that the binding and the library it was written against never
          differ in version.
The system packages this needs are the README's (zlib1g-dev liblz4-dev,
optionally libisal-dev liburing-dev) and python3-dev.
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def pkg_config(*args):
    """pkg-config's output split into words, or None when it fails."""
    try:
        out = subprocess.run(["pkg-config", *args], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.split()


def automake_sources(local_mk, prefix, conditions=None):
    """The .c files a local.mk lists (what the autotools build compiles).
    Inside `if NAME ... [else ...] endif`, with NAME in `conditions`, only
    the branch that the condition's value picks; other conditionals' files
    are all listed."""
    conditions = conditions or {}
    text = open(local_mk).read().replace("\\\n", " ")
    kept, stack = [], []  # stack: (name, in the else branch)
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["if"] and len(words) > 1:
            stack.append([words[1], False])
            continue
        if words[:1] == ["else"] and stack:
            stack[-1][1] = True
            continue
        if words[:1] == ["endif"] and stack:
            stack.pop()
            continue
        if all(name not in conditions or conditions[name] != in_else for name, in_else in stack):
            kept.append(line)
    found = re.findall(r"\b(%s/[\w/]+\.c)\b" % re.escape(prefix), "\n".join(kept))
    return [os.path.join(TOP, f) for f in dict.fromkeys(found)]


def version():
    m = re.search(r"AC_INIT\(\[recordio\], \[([^\]]+)\]", open(os.path.join(TOP, "configure.ac")).read())
    return m.group(1) if m else "0.0.0"


def source_build():
    """Extension arguments for compiling librecordio's sources in."""
    # libcurl: S3 and HTTP(S) shards (recordio/remote/), else its stubs
    curl_c, curl_l = pkg_config("--cflags", "libcurl"), pkg_config("--libs", "libcurl")
    have_curl = curl_c is not None and curl_l is not None
    sources = (automake_sources(os.path.join(TOP, "lib", "local.mk"), "lib")
               + automake_sources(os.path.join(TOP, "recordio", "local.mk"), "recordio",
                                  {"HAVE_CURL": have_curl})
               + [f for f in automake_sources(os.path.join(TOP, "loader", "local.mk"), "loader")
                  if not f.endswith("cuda.c")])
    defines = {"PACKAGE_VERSION": '"%s"' % version(), "_GNU_SOURCE": "1"}
    cflags, libs = [], []
    if have_curl:
        cflags += curl_c
        libs += curl_l
        defines["HAVE_CURL"] = "1"
    for mod, need, define in (("zlib", True, None), ("liblz4", True, None),
                              ("libisal", False, "HAVE_ISAL"), ("liburing", False, "HAVE_LIBURING")):
        c, l = pkg_config("--cflags", mod), pkg_config("--libs", mod)
        if c is None or l is None:
            if need:
                sys.exit("recordio: %s not found by pkg-config (Debian: apt-get install "
                         "zlib1g-dev liblz4-dev pkg-config)" % mod)
            continue
        cflags += c
        libs += l
        if define:
            defines[define] = "1"
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if os.environ.get("RECORDIO_CUDA", "auto") != "no" and \
            os.path.isfile(os.path.join(cuda, "include", "cuda_runtime.h")):
        sources.append(os.path.join(TOP, "loader", "cuda.c"))
        defines["HAVE_CUDA"] = "1"
        cflags.append("-I" + os.path.join(cuda, "include"))
        libs += ["-L" + os.path.join(cuda, "lib64"), "-Wl,-rpath," + os.path.join(cuda, "lib64"),
                 "-lcudart"]
    return sources, defines, cflags, libs


class BuildExt(build_ext):
    """Writes the config.h the library's sources include, then builds."""

    def build_extension(self, ext):
        conf = getattr(ext, "rio_config", None)
        if conf is not None:
            inc = os.path.join(self.build_temp, "rio_config")
            os.makedirs(inc, exist_ok=True)
            with open(os.path.join(inc, "config.h"), "w") as f:
                f.write("/* config.h for the Python build of librecordio (setup.py) */\n")
                for k, v in sorted(conf.items()):
                    f.write("#ifndef %s\n#define %s %s\n#endif\n" % (k, k, v))
            ext.include_dirs.insert(0, inc)
        super().build_extension(ext)


def extension():
    binding = [os.path.join("src", f)
               for f in ("module.c", "reader.c", "example.c", "pyloader.c", "dlpack.c")]
    mode = os.environ.get("RECORDIO_LIBRARY", "auto")
    have_sources = os.path.isfile(os.path.join(TOP, "recordio", "recordio.h")) and \
        os.path.isfile(os.path.join(TOP, "loader", "loader.h"))
    if mode == "auto":
        mode = "source" if have_sources else "system"
    if mode == "system":
        cflags, libs = pkg_config("--cflags", "recordio"), pkg_config("--libs", "recordio")
        if cflags is None or libs is None:
            sys.exit("recordio: no librecordio found by pkg-config (install it with the "
                     "repository's `make install`, or build from the repository's sources)")
        return Extension("recordio._core", binding, extra_compile_args=cflags,
                         extra_link_args=libs)
    if mode != "source" or not have_sources:
        sys.exit("recordio: RECORDIO_LIBRARY=%s: want auto, source or system "
                 "(source needs the repository around this folder)" % mode)
    sources, defines, cflags, libs = source_build()
    ext = Extension(
        "recordio._core", binding + sources,
        include_dirs=[os.path.join(TOP, d) for d in ("lib", "recordio", "loader")],
        define_macros=[("RIO_BUILDING_LIBRARY", "1")]
        + ([("RIO_PY_HAVE_CUDA", "1")] if "HAVE_CUDA" in defines else []),
        extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-pthread"] + cflags,
        extra_link_args=["-pthread"] + libs,
    )
    ext.rio_config = defines
    return ext


setup(
    name="recordio",
    version=version() if os.path.isfile(os.path.join(TOP, "configure.ac")) else "0.0.0",
    description="TFRecord-compatible shards: reader, writer, Example codec and a fast "
                "multi-threaded loader with zero-copy NumPy/PyTorch batches",
    packages=["recordio"],
    package_data={"recordio": ["py.typed", "*.pyi"]},
    ext_modules=[extension()],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
