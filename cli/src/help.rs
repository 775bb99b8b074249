//! The tool's help: the summary `clangoffload --help` prints, and each
//! subcommand's (`clangoffload list --help`), whose first line is also its
//! usage error.

/// The whole tool.
pub const TOOL: &str = "\
clangoffload: read and write LLVM/Clang offloading containers and CUDA fat binaries

USAGE:
  clangoffload list FILE                  entry IDs of every bundle in FILE, in file order, then
                                          the images of its CUDA fat binaries (cuobjdump's names)
  clangoffload extract FILE [-o DIR] [--force] [-j N]
                                          every entry to DIR/<file>.<index>.<entry ID>, every CUDA
                                          image to DIR/<file>.<n>.sm_<SM>.cubin|ptx (as cuobjdump)
  clangoffload inspect FILE [--json|--objdump] [--verify [--memory-budget SIZE]]
                                          every container in a file, ELF/COFF host file or archive:
                                          header fields, ratio, hash, entries, images, wrappers
  clangoffload scan FILE [--rejected]     every container anywhere in any file (memory images)
  clangoffload check PATH... [--kpack-path PATH]...
                                          what the HIP runtime hides about hosts ROCm's kpack split
                                          and their archives (files, or directories walked)
  clangoffload kpack split HOST... --group NAME [--prefix P] [--root DIR] [-o DIR]
                                          ROCm's kpack split: hosts rewritten as rocm-kpack does,
                                          their code objects to .kpack/NAME_<arch>.kpack archives
  clangoffload coverage PATH... [--device TARGET]... [--json] [--html OUT]
                                          will it run on my GPU: every file of device code under the
                                          paths (wheels read in place) by every device's runtime rule
  clangoffload select FILE --device TARGET [-o DIR] [--json]
                                          the code a device (gfx90a:xnack+, sm_89) loads from each
                                          container, kpack record or key, by its runtime's rule
  clangoffload bundler ARGS...            clang-offload-bundler (LLVM 22 flags and output)
  clangoffload packager ARGS...           llvm-offload-binary / clang-offload-packager (LLVM 22)
  clangoffload wrap --kind=K -o C FILE    C code registering FILE with the K=openmp|hip|cuda runtime
  clangoffload fatbinary ARGS...          NVIDIA's fatbinary (--create, --image3, --compress...)
  clangoffload nvprune ARGS...            NVIDIA's nvprune (-arch / -gencode, -o OUT IN)
  clangoffload COMMAND --help             that command's options
  clangoffload --version | --help

Invoked under the name clang-offload-bundler, clang-offload-packager,
llvm-offload-binary, fatbinary or nvprune, it acts as that tool.
-j N (or -jN, --jobs N): threads for extract (default: one per core).
CLANGOFFLOAD_MEMORY_BUDGET=SIZE (or extract --memory-budget SIZE): what decoding
may hold at once (default 256M, or the largest compressed bundle).
Compressed bundles and CUDA entries: CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE=<bytes>
raises the 1 GiB limit (for each compressed bundle or entry);
CLANGOFFLOAD_SKIP_HASH_CHECK=1 accepts a wrong hash (as LLVM does);
CLANGOFFLOAD_COMPRESSION_METHOD=zlib makes -compress write zlib instead of zstd.
";

/// `list`.
pub const LIST: &str = "\
usage: clangoffload list FILE [--kpack-path PATH]...

Prints the ID of every entry of every bundle in FILE (binary, text, compressed,
in ELF/COFF sections, in archive members as MEMBER: ID), in file order, then
every image of its CUDA fat binaries under the name cuobjdump extracts it to.
A kpack archive (.kpack): KEY: ID for each of its code objects. A host that
ROCm's kpack split: the IDs of each record's code objects, read through to the
archives its marker names (relative to the host) or that --kpack-path gives
(archive files, or directories of them). A file that holds none of these says
what it is and fails.
";

/// `extract`.
pub const EXTRACT: &str = "\
usage: clangoffload extract FILE [-o DIR] [--force] [-j N] [--memory-budget SIZE]
                            [--kpack-path PATH]...

Writes every entry of every container in FILE to its own file in DIR (default:
the current directory, created if missing): bundle entries as
<file>[.<member>].<index>.<entry ID>, OffloadBinary images as
<file>[.<member>].<index>.<triple>[-<arch>][.<ext>], CUDA images as cuobjdump
names them, kpack code objects (of an archive, or of a split host read through
to its archives as list does) as <file>.<index>.<key>.<entry ID>. Every path
written is printed. A damaged entry or container costs
only its own files: the others are written, each failure is an error line
naming where it is, and the exit status is 1.

  -o DIR          where the files go
  --force, -f     overwrite existing files (otherwise an existing file is an
                  error before anything is written)
  --kpack-path PATH
                  a split host's archives (a .kpack file, or a directory of
                  them), in place of those its marker names; repeatable
  -j N, -jN, --jobs N
                  threads (default: one per core); the files are the same for any N
  --memory-budget SIZE
                  what decoding compressed bundles may hold at once, across
                  threads (bytes, or with K, M, G): each bundle is admitted by
                  its declared size, one larger than the budget decoded alone
                  (default: 256M, or the largest bundle when that is more;
                  also CLANGOFFLOAD_MEMORY_BUDGET=SIZE)
";

/// `inspect`.
pub const INSPECT: &str = "\
usage: clangoffload inspect FILE [--json | --objdump] [--verify [--memory-budget SIZE]]

Shows every container in FILE (a bundle, an ELF or COFF/PE host, an archive, a
raw code object): header fields, compression ratio, hash, entries, images,
HIP/CUDA wrapper records, and any damage with its offset.

  --json          one JSON object (docs/cli.md)
  --objdump       what llvm-objdump --offloading prints
  --verify        decode every compressed bundle and check its hash (on every
                  core, under the memory budget)
  --memory-budget SIZE
                  what --verify may hold at once (as extract's; default 256M,
                  or the largest bundle; also CLANGOFFLOAD_MEMORY_BUDGET)
";

/// `scan`.
pub const SCAN: &str = "\
usage: clangoffload scan FILE [--rejected]

Finds every container and CUDA fat binary anywhere in FILE (a memory image,
a core dump, any bytes), in one pass.

  --rejected      also show the magic numbers that start no valid container
";

/// `check`.
pub const CHECK: &str = "\
usage: clangoffload check PATH... [--kpack-path PATH]...

Checks hosts ROCm's kpack split (files, or every file under a directory) and
the archives their markers name for what the HIP runtime hides, one finding
per line: a record whose pointer the split zeroed (non-PIE executables), a
record with no code object for an architecture other records have (the
splitter's per-architecture numbering), a variant archive (gfx90a:xnack-)
shadowing the base one under rocm-kpack's shipped loader, archive names that
ROCM_KPACK_PATH cannot give (':'), uncompressed archives, damaged entries,
containers the split left in the file. Exit status 1 when anything is found.

  --kpack-path PATH
                  the archives (a .kpack file, or a directory of them), in place
                  of those the markers name; repeatable
";

/// `kpack`.
pub const KPACK: &str = "\
usage: clangoffload kpack split HOST... --group NAME [--prefix P | --kernel-name N]
                                [--root DIR] [--scheme none|zstd] [-o DIR] [--force]
                                [--keys strict|record|rocm-kpack]

ROCm's kpack split, as rocm-kpack's artifact splitter does it: each HOST (an
x86-64 shared object or executable whose .hip_fatbin holds one bundle per HIPF
record) is written to DIR/<its path under ROOT> with its device code moved
out (.hip_fatbin left without bytes, HIPK records, a .rocm_kpack_ref marker
naming ../ per directory level + .kpack/NAME_@GFXARCH@.kpack, byte for byte
rocm-kpack's host), and its code objects to DIR/.kpack/NAME_<arch>.kpack,
one archive per architecture for all the HOSTs, keyed <kernel name>#<record>.
Inputs are never written. Every file written is printed; nothing is written
unless every HOST can be split.

  --group NAME    the archives' group (rocm-kpack's artifact prefix); required
  --prefix P      kernel names P/<path under ROOT>, as the splitter's prefix
  --kernel-name N the kernel name of the one HOST (default: its path under ROOT)
  --root DIR      where HOST paths are taken from (default: each HOST's directory)
  --scheme none|zstd
                  code objects stored as they are, or one zstd frame each
                  (level 3, as ROCm ships them; the default)
  --keys strict|record|rocm-kpack
                  strict (default): refuse a HOST whose translation units hold
                  different architectures, where rocm-kpack's per-architecture
                  numbering gives a record another unit's code; record: key by
                  record, as the runtime looks up; rocm-kpack: its numbering
  -o DIR          the output directory (default: .)
  --force         overwrite existing files
";

/// `coverage`.
pub const COVERAGE: &str = "\
usage: clangoffload coverage PATH... [--device TARGET]... [--json] [--html OUT] [--verify]

For every file holding device code under the PATHs (files; directories walked,
each directory and file once whatever the symbolic links; wheels and ZIP
archives read in place, member by member) and every device: whether its
runtime loads code for it (every container of the device's vendor must give
some), which code (native or generic, cubin or PTX to JIT), or why not, as
select decides it; kpack split hosts resolved through their archives. Then
findings: files that cannot be read, uncompressed bundles, fat binaries without
PTX, compressed bundles whose hash does not verify (--verify), and devices some
files of a PATH load code for and others not.

  --device TARGET an AMD target ID (gfx90a:sramecc+:xnack-) or NVIDIA SM
                  (sm_89); repeatable. Default: the current GPUs the library
                  lists and every device some file's code targets
  --json          one JSON object: devices, files (file, package, error,
                  targets with bytes, findings), cells (file, device, loads,
                  entry, how, reason: one per file and device), gaps
  --html OUT      also write a self-contained page: the matrix as a colour
                  map (hover a cell for its reason), bytes per architecture,
                  the findings
  --verify        decode every compressed bundle through MD5 to find those
                  the HIP runtime refuses
";

/// `select`.
pub const SELECT: &str = "\
usage: clangoffload select FILE --device TARGET [-o DIR] [--force] [--json]
                           [--kpack-loader first|fall-through]
                           [--rocm-kpack-path LIST] [--rocm-kpack-path-prefix LIST]
                           [--rocm-kpack-disable VALUE]

The code object a device would load from each container of FILE, by its
runtime's rule, and why; or why none. TARGET is an AMD target ID or ISA name
(gfx90a:sramecc+:xnack-, amdgcn-amd-amdhsa--gfx1100), chosen as the HIP runtime
chooses (native, then the generic family, then SPIR-V) from each bundle,
compressed bundle and OffloadBinary; or an NVIDIA SM (sm_89), chosen as the
CUDA driver chooses from each fat binary (the closest cubin, else PTX to JIT).
A host ROCm's kpack split: each HIPK record resolved as the runtime resolves
it, through the archives its marker names. A .kpack archive: each key in it.
Exit status 1 when some container, record or key gives the device nothing.

  --device TARGET the device (required)
  -o DIR          write each chosen code object to DIR, named as extract names
                  it; every path written is printed
  --force         overwrite existing files
  --json          one JSON object: file, device, choices (kind, offset, key,
                  loads, entry, how, reason, output, error), errors
  --kpack-loader first|fall-through
                  rocm-kpack's shipped loader (the first archive listing a
                  candidate decides) or the fall-through one (default)
  --rocm-kpack-path LIST, --rocm-kpack-path-prefix LIST, --rocm-kpack-disable V
                  ROCM_KPACK_PATH, ROCM_KPACK_PATH_PREFIX, ROCM_KPACK_DISABLE
                  (default: the environment's)
";

/// The help of `command`, if it has one here (the drop-ins and `wrap`
/// print their own).
pub fn of(command: &str) -> Option<&'static str> {
    match command {
        "list" => Some(LIST),
        "extract" => Some(EXTRACT),
        "inspect" => Some(INSPECT),
        "scan" => Some(SCAN),
        "check" => Some(CHECK),
        "kpack" => Some(KPACK),
        "select" => Some(SELECT),
        "coverage" => Some(COVERAGE),
        _ => None,
    }
}

/// A command's usage line: the first line of its help.
pub fn usage(help: &str) -> String {
    help.lines().next().unwrap_or_default().to_owned()
}
