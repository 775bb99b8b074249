// list_and_pick: find the offload code in any file and pick the code object
// for one target, as a loader scanning memory would. The C++ twin of
// list_and_pick.c (same output), written with clangoffload.hpp.
//
// Usage: list_and_pick FILE TARGET-ID
//
// FILE is anything: a bundle, a compressed bundle (CCOB), an OffloadBinary,
// a host object, executable, shared library or archive holding them. It is
// read into memory and scanned (clangoffload::scan); every container found is
// listed with its entries (a compressed bundle is decompressed and the bundle
// inside listed). TARGET-ID is a bundle entry ID such as
// hipv4-amdgcn-amd-amdhsa--gfx906 or hip-amdgcn-amd-amdhsa--gfx90a:xnack+:
// the first code object compatible with it, by clang-offload-bundler's rules,
// is picked.
//
// Output (stdout):
//   container <kind> at <offset> size <bytes>     one per container
//     entry <entry ID>                            one per entry
//   picked <entry ID> <payload size> bytes        last line
// Exit status: 0 when a code object was picked; 2 when none is compatible
// ("no code object for <TARGET-ID>" on stderr); 1 on a damaged input or a bad
// argument (the library's message on stderr).
//
// Build: c++ -std=c++17 list_and_pick.cpp -lclangoffload (or with
// libclangoffload.a -lpthread -ldl -lm).
#include "clangoffload.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace co = clangoffload;

namespace {

// The first compatible code object. The ID is copied: it may point into a
// decompressed buffer that is gone before the end.
struct picked {
  std::string id;
  std::size_t size;
};

// Prints what the library said about a damaged container and returns 1.
// `base` is the container's offset in FILE; the error's offset counts from
// the container's start (for the bundle inside a compressed container, the
// decompressed bytes have no offset in FILE: `base` is the container's).
int report(const co::error &e, uint64_t base) {
  std::cerr << "error: " << e.status_message() << " at offset " << base + e.offset() << ": " << e.message()
            << '\n';
  return 1;
}

// Lists the entries of the bundle in `data` and picks the first compatible
// one. Returns the exit status so far (0 or 1).
int list_bundle(co::bytes data, uint64_t base, std::string_view target, std::optional<picked> &pick) {
  co::result<co::bundle> bundle = co::bundle::parse(data);
  if (!bundle) return report(bundle.error(), base);
  for (const co::bundle_entry &entry : *bundle) std::cout << "  entry " << entry.id << '\n';
  if (co::result<co::bundle_entry> entry = bundle->find_compatible(target); entry && !pick)
    pick = picked{std::string(entry->id), entry->payload.size()};
  return 0;
}

// Decompresses a CCOB (its declared size is checked against the default
// 1 GiB limit before anything is allocated) and lists the bundle inside.
int list_compressed(const co::scan_hit &hit, std::string_view target, std::optional<picked> &pick) {
  co::result<std::vector<uint8_t>> plain = co::decompress(hit.data);
  if (!plain) return report(plain.error(), hit.offset);
  // A compressed text bundle (-type=s, ll, ...) holds no code object.
  if (co::bytes(*plain).str().substr(0, 24) != "__CLANG_OFFLOAD_BUNDLE__") return 0;
  return list_bundle(*plain, hit.offset, target, pick);
}

// OffloadBinary images have no entry ID: make the bundle-style one from the
// offload kind, the triple (an empty environment added to a three-part
// triple) and the arch, e.g. openmp-amdgcn-amd-amdhsa--gfx90a:xnack+.
std::string image_id(const co::offload_entry &entry) {
  std::string id(co::offload_kind_name(entry.offload_kind));
  id += '-';
  id += entry.triple;
  if (std::count(entry.triple.begin(), entry.triple.end(), '-') == 2) id += '-';
  id += '-';
  id += entry.arch;
  return id;
}

// Lists the images of an OffloadBinary and picks the first compatible one.
int list_offload_binary(const co::scan_hit &hit, std::string_view target, std::optional<picked> &pick) {
  co::result<co::offload_binaries> binaries = co::offload_binaries::parse(hit.data);
  if (!binaries) return report(binaries.error(), hit.offset);
  for (const co::offload_entry &entry : *binaries) {
    std::string id = image_id(entry);
    std::cout << "  entry " << id << '\n';
    if (!pick && co::entry_id_is_compatible(id, target).value_or(false)) pick = picked{id, entry.image.size()};
  }
  return 0;
}

// A container magic at offset 0 that starts no valid container: FILE itself
// is a damaged container. Walking it as a sequence of containers gives the
// located error, which the range keeps once the loop has ended.
int report_damaged(co::bytes data, uint32_t status) {
  co::container_range walk = co::containers(data);
  for (const co::container &container : walk) (void)container;
  if (walk.error()) return report(*walk.error(), 0);
  std::cerr << "error: " << co::status_message(status) << " at offset 0\n";
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " FILE TARGET-ID\n";
    return 1;
  }
  std::string_view target = argv[2];
  if (co::result<co::entry_id> parsed = co::parse_entry_id(target); !parsed) {
    std::cerr << "error: invalid TARGET-ID '" << target << "': " << parsed.error().status_message() << '\n';
    return 1;
  }
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());

  // Every container anywhere in the file, in offset order. With
  // CLANGOFFLOAD_SCAN_REJECTED the scan also reports magics that start no
  // valid container. The hits borrow `data`.
  std::optional<picked> pick;
  int status = 0;
  for (const co::scan_hit &hit : co::scan(data, CLANGOFFLOAD_SCAN_REJECTED)) {
    if (!hit.valid()) {
      // Inside a file, such bytes are usually just bytes (a section name, a
      // string); at offset 0 the file itself is a damaged container.
      if (hit.offset == 0) status = report_damaged(data, hit.status);
    } else {
      std::cout << "container " << co::container_kind_name(hit.kind) << " at " << hit.offset << " size "
                << hit.data.size() << '\n';
      if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_BUNDLE)
        status = list_bundle(hit.data, hit.offset, target, pick);
      else if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED)
        status = list_compressed(hit, target, pick);
      else if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_OFFLOAD_BINARY)
        status = list_offload_binary(hit, target, pick);
    }
    if (status != 0) return status;
  }

  if (!pick) {
    std::cerr << "no code object for " << target << '\n';
    return 2;
  }
  std::cout << "picked " << pick->id << ' ' << pick->size << " bytes\n";
  return 0;
}
