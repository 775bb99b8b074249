// Exercises include/clangoffload.hpp on the committed fixtures.
//
// Usage: wrapper_test FIXTURES_DIR          run every check; prints
//                                           "checks: N failed: 0" and exits 0
//        wrapper_test --value-on-error      calls value() on an error result:
//                                           with exceptions, catches it and
//                                           prints "caught ..."; without, the
//                                           wrapper aborts
#include "clangoffload.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(CLANGOFFLOAD_NO_EXCEPTIONS)
#define HAVE_EXCEPTIONS 0
#else
#define HAVE_EXCEPTIONS 1
#endif

namespace co = clangoffload;

namespace {

int checks = 0;
int failures = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    ++checks;                                                                         \
    if (!(cond)) {                                                                    \
      std::cerr << __FILE__ << ":" << __LINE__ << ": check failed: " #cond << '\n';   \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

std::string fixtures;

std::vector<uint8_t> read(const std::string &name) {
  std::ifstream file(fixtures + "/" + name, std::ios::binary);
  if (!file) {
    std::cerr << "cannot read " << fixtures << "/" << name << '\n';
    std::exit(3);
  }
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines(const std::string &name) {
  std::vector<uint8_t> data = read(name);
  std::istringstream in(std::string(data.begin(), data.end()));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

bool same(co::bytes a, co::bytes b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

// `inner` lies inside `outer` (a view, not a copy).
bool inside(co::bytes inner, co::bytes outer) {
  return inner.data() >= outer.data() && inner.data() + inner.size() <= outer.data() + outer.size();
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

template <class Range>
std::vector<std::string> bundle_ids(const Range &range) {
  std::vector<std::string> ids;
  for (const auto &entry : range) ids.emplace_back(entry.id);
  return ids;
}

// ---------------------------------------------------------------------------
// Types

template <class T>
constexpr bool move_only = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
static_assert(move_only<co::bundle>);
static_assert(move_only<co::text_bundle>);
static_assert(move_only<co::object_bundle>);
static_assert(move_only<co::archive>);
static_assert(move_only<co::offload_binaries>);
static_assert(move_only<co::cuda_fatbins>);
static_assert(move_only<co::image_arguments>);
static_assert(move_only<co::buffer>);
static_assert(std::is_base_of_v<std::runtime_error, co::exception>);

template <class It>
constexpr bool input_iterator =
    std::is_same_v<typename std::iterator_traits<It>::iterator_category, std::input_iterator_tag>;
static_assert(input_iterator<decltype(std::declval<const co::bundle &>().begin())>);
static_assert(input_iterator<decltype(std::declval<const co::archive &>().begin())>);
static_assert(input_iterator<decltype(std::declval<const co::offload_binaries &>().begin())>);
static_assert(input_iterator<co::container_range::iterator>);
static_assert(input_iterator<co::scan_range::iterator>);
static_assert(input_iterator<co::elf_section_range::iterator>);
static_assert(input_iterator<co::bundle_entry_range::iterator>);
static_assert(std::is_same_v<decltype(*std::declval<const co::bundle &>().begin()), co::bundle_entry>);

// ---------------------------------------------------------------------------

void test_basics() {
  std::string version = std::to_string(CLANGOFFLOAD_VERSION_MAJOR) + "." +
                        std::to_string(CLANGOFFLOAD_VERSION_MINOR) + "." +
                        std::to_string(CLANGOFFLOAD_VERSION_PATCH);
  CHECK(co::version() == version);
  CHECK(co::status_message(CLANGOFFLOAD_STATUS_TRUNCATED) == "truncated header");
  CHECK(co::status_message(12345) == "unknown status");

  std::string_view text = "abcdef";
  co::bytes b = text;
  CHECK(b.size() == 6 && !b.empty() && b.data() == reinterpret_cast<const uint8_t *>(text.data()));
  CHECK(b.str() == "abcdef" && static_cast<std::string_view>(b) == "abcdef");
  CHECK(b.subspan(2, 3).str() == "cde" && b.subspan(4).str() == "ef" && b.subspan(9).empty());
  CHECK(b[1] == 'b' && *b.begin() == 'a' && std::distance(b.begin(), b.end()) == 6);
  CHECK(co::bytes().empty() && co::bytes().data() == nullptr);
  clangoffload_bytes c = b.c();
  CHECK(c.ptr == b.data() && c.len == 6);
  std::string copy;
  for (uint8_t byte : b) copy.push_back(static_cast<char>(byte));
  CHECK(copy == "abcdef");

  co::error e(CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(e.status() == CLANGOFFLOAD_STATUS_NOT_FOUND && e.offset() == 0 && !e.has_entry());
  CHECK(e.message() == co::status_message(CLANGOFFLOAD_STATUS_NOT_FOUND));

  co::result<int> good = 7;
  co::result<int> bad = co::error(CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(good && good.has_value() && *good == 7 && good.value() == 7 && good.status() == 0);
  CHECK(!bad && bad.status() == CLANGOFFLOAD_STATUS_NOT_FOUND && bad.value_or(3) == 3);
  co::result<void> fine;
  CHECK(fine && fine.status() == 0);
}

// Every LLVM 22 bundle: the entry IDs are those LLVM's -list printed (which
// prints each ID once, sorted here), the payloads are views into the file.
void test_bundles() {
  for (const char *name : {"align3", "duplicate-ids", "hip-4096", "hip-only", "normalized", "openmp"}) {
    std::string base = std::string("llvm22/") + name;
    std::vector<uint8_t> data = read(base + ".bundle");
    co::result<co::bundle> bundle = co::bundle::parse(data);
    CHECK(bundle.has_value());
    if (!bundle) continue;
    CHECK(sorted_unique(bundle_ids(*bundle)) == sorted_unique(lines(base + ".list")));
    for (const co::bundle_entry &entry : *bundle) {
      CHECK(inside(entry.payload, data));
      CHECK(entry.payload.data() == data.data() + entry.offset);
    }
    CHECK(!bundle->fault().has_value());
  }

  std::vector<uint8_t> data = read("llvm22/hip-4096.bundle");
  co::bundle bundle = co::bundle::parse(data).value();
  CHECK(bundle.size() == 3 && !bundle.empty() && bundle.header_len() > 0);
  CHECK(bundle[0].id == "host-x86_64-unknown-linux-gnu-" && bundle[0].payload.empty() && bundle[0].offset == 4096);
  CHECK(bundle[2].id == "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+" && bundle[2].index == 2);
  CHECK(same(bundle[1].payload, read("inputs/gfx906.co")));
  CHECK(same(bundle[2].payload, read("inputs/gfx90a-xnack.co")));
  CHECK(bundle.at(2).has_value() && bundle.at(3).status() == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);

  // Iterators work with the standard algorithms.
  CHECK(std::distance(bundle.begin(), bundle.end()) == 3);
  auto found = std::find_if(bundle.begin(), bundle.end(),
                            [](const co::bundle_entry &e) { return e.id == "hipv4-amdgcn-amd-amdhsa--gfx906"; });
  CHECK(found != bundle.end() && found->index == 1 && (*found).payload.size() == bundle[1].payload.size());
  std::vector<co::bundle_entry> all(bundle.begin(), bundle.end());
  CHECK(all.size() == 3 && all[2].id == bundle[2].id);

  co::result<co::bundle_entry> compatible = bundle.find_compatible("hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+");
  CHECK(compatible && compatible->index == 1 && compatible->id == "hipv4-amdgcn-amd-amdhsa--gfx906");
  CHECK(bundle.find_compatible("hip-amdgcn-amd-amdhsa--gfx90a").status() == CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(bundle.find_compatible("openmp-amdgcn-amd-amdhsa--gfx906").status() == CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(bundle.find_compatible("openmp-amdgcn-amd-amdhsa--gfx906", CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE)->index == 1);
  CHECK(bundle.find_compatible("gfx906").status() == CLANGOFFLOAD_STATUS_ENTRY_ID_TOO_FEW_COMPONENTS);
  co::result<std::vector<clangoffload_bundle_diagnostic>> diagnostics = bundle.validate();
  CHECK(diagnostics && diagnostics->empty());

  // Handles move; a moved-from handle is empty.
  co::bundle moved = std::move(bundle);
  CHECK(moved.size() == 3 && bundle.size() == 0 && bundle.begin() == bundle.end());  // NOLINT(bugprone-use-after-move)

  std::vector<uint8_t> dup = read("llvm22/duplicate-ids.bundle");
  co::bundle dups = co::bundle::parse(dup).value();
  co::result<std::vector<clangoffload_bundle_diagnostic>> found_dups = dups.validate();
  CHECK(found_dups && std::any_of(found_dups->begin(), found_dups->end(), [](const clangoffload_bundle_diagnostic &d) {
          return d.kind == CLANGOFFLOAD_DIAGNOSTIC_KIND_DUPLICATE_ID;
        }));

  std::vector<uint8_t> only = read("llvm22/hip-only.bundle");
  co::bundle devices = co::bundle::parse(only).value();
  struct {
    const char *device;
    std::size_t index;
    clangoffload_device_match how;
  } cases[] = {
      {"gfx90a:sramecc+:xnack-", 1, CLANGOFFLOAD_DEVICE_MATCH_NATIVE},
      {"gfx906:xnack+", 0, CLANGOFFLOAD_DEVICE_MATCH_GENERIC},
      {"gfx1100", 2, CLANGOFFLOAD_DEVICE_MATCH_SPIRV},
      {"gfx90a:sramecc-:xnack-", 2, CLANGOFFLOAD_DEVICE_MATCH_SPIRV},
  };
  for (const auto &c : cases) {
    co::result<co::device_selection> chosen = devices.select_for_device(c.device);
    CHECK(chosen && chosen->entry.index == c.index && chosen->match == c.how);
    CHECK(chosen && chosen->entry.id == lines("llvm22/hip-only.list")[c.index]);
  }
}

// The handle-free bundle functions agree with the handle.
void test_bundle_without_handle() {
  std::vector<uint8_t> data = read("llvm22/hip-4096.bundle");
  co::bundle bundle = co::bundle::parse(data).value();
  co::bundle_entry_range walk = co::bundle_entries(data);
  std::size_t n = 0;
  for (const co::bundle_entry &e : walk) {
    CHECK(n < bundle.size() && e.index == n && e.id == bundle[n].id);
    CHECK(e.payload.data() == bundle[n].payload.data() && e.payload.size() == bundle[n].payload.size());
    CHECK(e.descriptor_offset == bundle[n].descriptor_offset);
    ++n;
  }
  CHECK(n == 3 && walk.complete());

  co::result<co::bundle_entry> found = co::find_compatible_entry(data, "hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+");
  CHECK(found && found->id == "hipv4-amdgcn-amd-amdhsa--gfx906" && found->payload.data() == bundle[1].payload.data());
  CHECK(found && found->index == co::bundle_entry::unknown_index);
  CHECK(co::find_compatible_entry(data, "hip-amdgcn-amd-amdhsa--gfx90a").status() == CLANGOFFLOAD_STATUS_NOT_FOUND);

  std::vector<uint8_t> only = read("llvm22/hip-only.bundle");
  co::result<co::device_selection> chosen = co::select_entry_for_device(only, "gfx906:xnack+");
  CHECK(chosen && chosen->match == CLANGOFFLOAD_DEVICE_MATCH_GENERIC &&
        chosen->entry.id == "hip-amdgcn-amd-amdhsa--gfx9-generic");
  CHECK(co::select_entry_for_device(only, "gfx90a:sramecc+:xnack-")->match == CLANGOFFLOAD_DEVICE_MATCH_NATIVE);

  // Damaged: the entries in front of the bad descriptor, then its error.
  std::vector<uint8_t> openmp = read("llvm22/openmp.bundle");
  co::bytes short_by_one(openmp.data(), openmp.size() - 1);
  co::bundle_entry_range cut = co::bundle_entries(short_by_one);
  CHECK(std::distance(cut.begin(), cut.end()) == 2);
  CHECK(cut.error() && cut.error()->status() == CLANGOFFLOAD_STATUS_PAYLOAD_OUT_OF_BOUNDS && cut.error()->entry() == 2);
  co::result<co::bundle_entry> bad =
      co::find_compatible_entry(co::bytes(openmp.data(), 90), "openmp-amdgcn-amd-amdhsa--gfx906");
  CHECK(!bad && bad.status() == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE && bad.error().offset() == 24);
}

// A damaged bundle: the same status, offset, entry and message through the
// result and through the exception.
void test_malformed() {
  std::vector<uint8_t> data = read("llvm22/openmp.bundle");
  co::bytes cut(data.data(), 90);  // three descriptors cannot fit
  co::result<co::bundle> bad = co::bundle::parse(cut);
  CHECK(!bad && bad.status() == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE);
  CHECK(!bad && bad.error().status() == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE && bad.error().offset() == 24);
  CHECK(!bad && contains(bad.error().message(), "entry count 3") && !bad.error().has_entry());
  CHECK(!bad && bad.error().status_message() == "entry count cannot fit in the input");
#if HAVE_EXCEPTIONS
  bool thrown = false;
  try {
    co::bundle never = co::bundle::parse(cut).value();
    (void)never;
  } catch (const co::exception &e) {
    thrown = true;
    CHECK(e.status() == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE && e.offset() == 24);
    CHECK(e.entry() == CLANGOFFLOAD_NO_ENTRY && contains(e.what(), "entry count 3"));
    CHECK(e.error().message() == bad.error().message());
  }
  CHECK(thrown);
  thrown = false;
  try {
    (void)co::bundle::parse(co::bytes(data.data(), data.size() - 1)).value();
  } catch (const std::runtime_error &e) {
    thrown = contains(e.what(), "ends past the end of the input");
  }
  CHECK(thrown);
#endif

  // Payload past the end: strict fails at entry 2, lenient keeps two entries.
  co::bytes short_by_one(data.data(), data.size() - 1);
  co::result<co::bundle> strict = co::bundle::parse(short_by_one);
  CHECK(!strict && strict.status() == CLANGOFFLOAD_STATUS_PAYLOAD_OUT_OF_BOUNDS && strict.error().entry() == 2);
  co::result<co::bundle> lenient = co::bundle::parse(short_by_one, CLANGOFFLOAD_PARSE_LENIENT);
  CHECK(lenient && lenient->size() == 2);
  std::optional<co::error> fault = lenient ? lenient->fault() : std::nullopt;
  CHECK(fault && fault->status() == CLANGOFFLOAD_STATUS_PAYLOAD_OUT_OF_BOUNDS && fault->entry() == 2);
  CHECK(fault && fault->message() == strict.error().message());

  CHECK(co::bundle::parse(std::string_view("hello")).status() == CLANGOFFLOAD_STATUS_NOT_A_BUNDLE);
  CHECK(co::bundle::parse(co::bytes()).status() == CLANGOFFLOAD_STATUS_NOT_A_BUNDLE);
  CHECK(co::bundle::parse(data, 0x80).status() == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
}

// Every CCOB of the manifest decompresses to its uncompressed bundle, into a
// vector and into our own buffer; the size cap and a damaged stream fail
// with located errors.
void test_compressed() {
  int seen = 0;
  for (const std::string &line : lines("compressed/MANIFEST")) {
    if (line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, '|');) f.push_back(field);
    if (f.size() != 7) {
      CHECK(f.size() == 7);
      continue;
    }
    ++seen;
    std::vector<uint8_t> ccob = read("compressed/" + f[0]);
    std::vector<uint8_t> plain = read("compressed/" + f[5]);

    co::result<co::compressed_header> header = co::parse_compressed_header(ccob);
    CHECK(header && std::to_string(header->version) == f[2]);
    CHECK(header && header->method == (f[3] == "zstd" ? CLANGOFFLOAD_METHOD_ZSTD : CLANGOFFLOAD_METHOD_ZLIB));
    CHECK(header && header->uncompressed_size == plain.size() && inside(header->compressed, ccob));
    CHECK(header && co::truncated_md5(plain).value() == header->hash);

    CHECK(co::decompressed_size(ccob).value_or(0) == plain.size());
    co::result<std::vector<uint8_t>> out = co::decompress(ccob);
    CHECK(out && *out == plain);

    std::vector<uint8_t> mine(plain.size() + 10, 0xAA);
    co::result<std::size_t> written = co::decompress_into(ccob, mine.data(), mine.size());
    CHECK(written && *written == plain.size() && std::equal(plain.begin(), plain.end(), mine.begin()));
    CHECK(co::decompress_into(ccob, mine.data(), plain.size() - 1).status() == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
    co::result<std::vector<uint8_t>> capped = co::decompress(ccob, plain.size() - 1);
    CHECK(!capped && capped.status() == CLANGOFFLOAD_STATUS_SIZE_LIMIT_EXCEEDED);
    CHECK(co::decompress(ccob, plain.size()).has_value());

    // The entries inside are LLVM's -list of the CCOB.
    std::vector<std::string> expected = sorted_unique(lines("compressed/" + f[6]));
    if (out && co::bundle::parse(*out)) {
      CHECK(sorted_unique(bundle_ids(co::bundle::parse(*out).value())) == expected);
    } else if (out) {  // asm: a text bundle (-type=s)
      co::result<uint32_t> comment = co::text_comment_for_type("s");
      CHECK(comment && *comment == CLANGOFFLOAD_COMMENT_HASH);
      co::result<co::text_bundle> text = co::text_bundle::parse(*out, comment.value_or(0));
      CHECK(text && sorted_unique(bundle_ids(*text)) == expected);
      if (text) {
        std::vector<co::entry_input> entries;
        for (const co::text_bundle_entry &e : *text) {
          CHECK(inside(e.payload, *out));
          entries.push_back({e.id, e.payload});
        }
        co::result<co::buffer> again = co::write_text_bundle(*comment, entries);
        CHECK(again && same(*again, *out));
        CHECK(!text->fault().has_value() && text->at(text->size()).status() == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
      }
    }
  }
  CHECK(seen == 12);
  CHECK(co::text_comment_for_type("bc").status() == CLANGOFFLOAD_STATUS_NOT_FOUND);

  // Compression round trips.
  std::vector<uint8_t> plain = read("compressed/llvm22/hip.bundle");
  for (uint16_t method : {uint16_t{CLANGOFFLOAD_METHOD_ZSTD}, uint16_t{CLANGOFFLOAD_METHOD_ZLIB}}) {
    co::result<std::vector<uint8_t>> packed = co::compress(plain, 2, method);
    CHECK(packed && packed->size() < plain.size());
    CHECK(packed && co::parse_compressed_header(*packed)->method == method);
    CHECK(packed && co::decompress(*packed).value_or(std::vector<uint8_t>()) == plain);
  }

  // A damaged stream: located error, by result and by exception.
  std::vector<uint8_t> damaged = read("compressed/llvm22/hip.v3.ccob");
  damaged[100] ^= 0x55;
  co::result<std::vector<uint8_t>> broken = co::decompress(damaged);
  CHECK(!broken && broken.status() == CLANGOFFLOAD_STATUS_CORRUPT_STREAM && broken.error().offset() == 32);
  CHECK(!broken && contains(broken.error().message(), "corrupt zstd stream"));
#if HAVE_EXCEPTIONS
  bool thrown = false;
  try {
    (void)co::decompress(damaged).value();
  } catch (const co::exception &e) {
    thrown = e.status() == CLANGOFFLOAD_STATUS_CORRUPT_STREAM && e.offset() == 32;
  }
  CHECK(thrown);
#endif
  std::vector<uint8_t> huge = read("compressed/llvm22/hip.v3.ccob");
  huge[20] ^= 0x55;  // the declared size
  co::result<std::size_t> refused = co::decompressed_size(huge);
  CHECK(!refused && refused.status() == CLANGOFFLOAD_STATUS_SIZE_LIMIT_EXCEEDED && refused.error().offset() == 16);
}

// containers(): a linked .hip_fatbin, as its layout file says; a damaged
// sequence ends the loop and leaves its error in the range.
void test_containers() {
  std::vector<uint8_t> data = read("compressed/concat/hip.hip_fatbin");
  std::vector<std::pair<uint64_t, uint64_t>> expected;
  for (const std::string &line : lines("compressed/concat/hip.layout")) {
    if (line[0] == '#') continue;
    std::size_t bar = line.find('|'), bar2 = line.find('|', bar + 1);
    expected.emplace_back(std::stoull(line.substr(0, bar)), std::stoull(line.substr(bar + 1, bar2 - bar - 1)));
  }
  CHECK(expected.size() == 4);
  co::container_range walk = co::containers(data);
  std::vector<std::pair<uint64_t, uint64_t>> got;
  std::vector<clangoffload_container_kind> kinds;
  for (const co::container &c : walk) {
    got.emplace_back(c.offset, c.data.size());
    kinds.push_back(c.kind);
    CHECK(c.data.data() == data.data() + c.offset);
  }
  CHECK(got == expected);
  CHECK(kinds.size() == 4 && kinds[0] == CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED &&
        kinds[3] == CLANGOFFLOAD_CONTAINER_KIND_BUNDLE);
  CHECK(!walk.error().has_value() && walk.complete());
  CHECK(walk.begin() == walk.end());  // single pass: nothing left

  // Post-increment yields the item it was at, as input iterators must.
  co::container_range again = co::containers(data);
  co::container_range::iterator it = again.begin();
  CHECK((*it++).offset == 0 && it->offset == 8192 && it++->offset == 8192 && it->offset == 16384);
  CHECK(co::container_kind_name(CLANGOFFLOAD_CONTAINER_KIND_OFFLOAD_BINARY) == "offload_binary");

  // Cut inside the fourth container: three, then the located error.
  co::container_range cut = co::containers(co::bytes(data.data(), 24576 + 100));
  std::size_t count = 0;
  for (const co::container &c : cut) {
    (void)c;
    ++count;
  }
  CHECK(count == 3 && cut.error().has_value() && !cut.complete());
  CHECK(cut.error() && cut.error()->status() == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE);
  CHECK(cut.error() && cut.error()->offset() == 24576 + 24 && contains(cut.error()->message(), "entry count 3"));

  std::vector<uint8_t> bundle = read("llvm22/hip-4096.bundle");
  co::container_range truncated = co::containers(co::bytes(bundle.data(), 5000));
  CHECK(std::distance(truncated.begin(), truncated.end()) == 0);
  CHECK(truncated.error() && truncated.error()->status() == CLANGOFFLOAD_STATUS_PAYLOAD_OUT_OF_BOUNDS &&
        truncated.error()->offset() == 86 && truncated.error()->entry() == 1);

  co::result<uint64_t> extent = co::container_extent(bundle.data(), bundle.size());
  CHECK(extent && *extent == bundle.size());
}

// scan(): containers anywhere, checked against what LLVM's tools printed.
void test_scan() {
  std::vector<uint8_t> hip = read("offload/hip.o");
  std::vector<co::scan_hit> hits;
  co::scan_range found = co::scan(hip);
  for (const co::scan_hit &hit : found) hits.push_back(hit);
  CHECK(found.complete());
  CHECK(hits.size() == 1);
  if (hits.size() == 1) {
    CHECK(hits[0].valid() && hits[0].kind == CLANGOFFLOAD_CONTAINER_KIND_BUNDLE && hits[0].offset == 0x1000);
    CHECK(hits[0].data.data() == hip.data() + 0x1000);
    co::result<co::bundle> b = co::bundle::parse(hits[0].data);
    CHECK(b && sorted_unique(bundle_ids(*b)) == sorted_unique(lines("offload/hip.o.hip_fatbin.list")));
  }

  // offload.a: as many OffloadBinaries as llvm-objdump --offloading printed
  // images (all version 1: one image each), and hip.o's bundle.
  std::vector<uint8_t> archive = read("offload/offload.a");
  std::size_t images = 0, bundles = 0, others = 0;
  for (const co::scan_hit &hit : co::scan(archive)) {
    if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_OFFLOAD_BINARY) ++images;
    else if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_BUNDLE) ++bundles;
    else ++others;
    CHECK(inside(hit.data, archive));
  }
  std::size_t printed = 0;
  for (const std::string &line : lines("offload/offload.a.objdump")) printed += line.rfind("OFFLOADING IMAGE", 0) == 0;
  CHECK(printed == 18 && images == printed && bundles == 1 && others == 0);

  // hip-rdc.o's section names hold the bundle magic: rejected, and only
  // reported when asked for.
  std::vector<uint8_t> rdc = read("offload/hip-rdc.o");
  CHECK(std::distance(co::scan(rdc).begin(), co::scan(rdc).end()) == 0);
  std::size_t rejected = 0;
  for (const co::scan_hit &hit : co::scan(rdc, CLANGOFFLOAD_SCAN_REJECTED)) {
    CHECK(!hit.valid() && hit.status == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE && hit.data.empty());
    ++rejected;
  }
  CHECK(rejected == 3);
  co::scan_range bad_flags = co::scan(rdc, 0x80);
  CHECK(bad_flags.begin() == bad_flags.end() && bad_flags.error() &&
        bad_flags.error()->status() == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
}

// ELF sections and wrapper records of hip.o, against readelf's table
// (hip.o.sections): [8] .hip_fatbin at 0x1000 size 0x46f0, [9]
// .hipFatBinSegment at 0x56f0 size 0x18.
void test_elf() {
  std::vector<uint8_t> hip = read("offload/hip.o");
  std::string table;
  for (const std::string &line : lines("offload/hip.o.sections")) table += line + "\n";
  CHECK(contains(table, "[ 8] .hip_fatbin       PROGBITS        0000000000000000 001000 0046f0"));
  CHECK(contains(table, "[ 9] .hipFatBinSegment PROGBITS        0000000000000000 0056f0 000018"));

  co::elf_section_range sections = co::elf_offload_sections(hip);
  std::vector<co::offload_section> found(sections.begin(), sections.end());
  CHECK(!sections.error().has_value());
  CHECK(found.size() == 2);
  if (found.size() == 2) {
    CHECK(found[0].kind == CLANGOFFLOAD_SECTION_KIND_HIP_FATBIN && found[0].section_index == 8);
    CHECK(found[0].name == ".hip_fatbin" && found[0].offset == 0x1000 && found[0].data.size() == 0x46f0);
    CHECK(found[0].data.data() == hip.data() + 0x1000);
    CHECK(found[1].kind == CLANGOFFLOAD_SECTION_KIND_HIP_WRAPPERS && found[1].section_index == 9);
    CHECK(found[1].name == ".hipFatBinSegment" && found[1].offset == 0x56f0 && found[1].data.size() == 0x18);
  }

  co::result<std::vector<co::fatbin_wrapper_record>> records = co::fatbin_wrappers(hip, 9);
  CHECK(records && records->size() == 1);
  if (records && records->size() == 1) {
    const co::fatbin_wrapper_record &r = (*records)[0];
    CHECK(r.magic == CLANGOFFLOAD_FATBIN_MAGIC_HIP && r.version == 1 && r.resolved);
    CHECK(r.target_section == 8 && r.target_offset == 0 && r.target.data() == hip.data() + 0x1000);
    CHECK(r.target.size() == 18160);
  }
  co::result<co::fatbin_wrapper_record> one = co::fatbin_wrapper(hip, 9, 0);
  CHECK(one && one->resolved && one->target.size() == 18160);
  CHECK(co::fatbin_wrapper(hip, 9, 1).status() == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);

  // Not ELF: no sections, the error kept, the loop ends.
  co::elf_section_range none = co::elf_offload_sections(std::string_view("definitely not an ELF file"));
  CHECK(std::distance(none.begin(), none.end()) == 0);
  CHECK(none.error() && none.error()->status() == CLANGOFFLOAD_STATUS_NOT_ELF);

  // A damaged section header (section 3's contents far outside the file):
  // reported, and the walk goes on to the offload sections after it.
  std::vector<uint8_t> damaged = hip;
  std::size_t header3 = 0x5e80 + 3 * 64;
  for (std::size_t i = 0; i < 8; ++i) damaged[header3 + 24 + i] = i < 4 ? 0xff : 0x00;
  co::elf_section_range walk = co::elf_offload_sections(damaged);
  std::vector<uint32_t> indices;
  for (const co::offload_section &s : walk) indices.push_back(s.section_index);
  CHECK((indices == std::vector<uint32_t>{8, 9}));
  CHECK(walk.error() && walk.error()->status() == CLANGOFFLOAD_STATUS_SECTION_OUT_OF_BOUNDS);

  clangoffload_fatbin_wrapper wrapper{CLANGOFFLOAD_FATBIN_MAGIC_HIP, 1, hip.data() + 0x1000, nullptr};
  CHECK(co::fatbin_wrapper_check(&wrapper).value_or(0) == CLANGOFFLOAD_FATBIN_MAGIC_HIP);
  wrapper.version = 2;
  CHECK(co::fatbin_wrapper_check(&wrapper).status() == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
  CHECK(co::fatbin_wrapper_check(nullptr).status() == CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
}

// One "OFFLOADING IMAGE" block of llvm-objdump --offloading.
struct printed_image {
  std::string kind, arch, triple, producer;
};
std::vector<printed_image> objdump(const std::string &name) {
  std::vector<printed_image> out;
  for (const std::string &line : lines(name)) {
    if (line.rfind("OFFLOADING IMAGE", 0) == 0) out.emplace_back();
    if (out.empty()) continue;
    std::string key = line.substr(0, line.find(' '));
    std::string value = line.size() > 16 ? line.substr(16) : "";
    if (key == "kind") out.back().kind = value;
    if (key == "arch") out.back().arch = value;
    if (key == "triple") out.back().triple = value;
    if (key == "producer") out.back().producer = value;
  }
  return out;
}

void test_offload_binaries() {
  std::vector<uint8_t> multi = read("offload/multi.offbin");
  co::result<co::offload_binaries> binaries = co::offload_binaries::parse(multi);
  std::vector<printed_image> printed = objdump("offload/multi.offbin.objdump");
  CHECK(binaries && binaries->size() == 9 && printed.size() == 9);
  if (!binaries || printed.size() != binaries->size()) return;
  for (const co::offload_entry &e : *binaries) {
    const printed_image &p = printed[e.index];
    CHECK(co::image_kind_name(e.image_kind, 1) == p.kind);
    CHECK(e.arch == p.arch && e.triple == p.triple);
    CHECK(co::offload_kind_name(e.offload_kind) == p.producer);
    CHECK(e.version == 1 && !e.compressed && e.binary_index == e.index && inside(e.image, multi));
    // The strings hold the triple and arch; find_string agrees.
    std::size_t n = 0;
    bool saw_triple = false;
    for (const co::string_pair &s : binaries->strings(e.index)) {
      ++n;
      if (s.key == "triple") saw_triple = s.value == e.triple;
    }
    CHECK(n == e.string_count && (saw_triple || e.triple.empty()));
    if (!e.triple.empty()) CHECK(binaries->find_string(e.index, "triple").value_or("") == e.triple);
    CHECK(binaries->find_string(e.index, "no-such-key").status() == CLANGOFFLOAD_STATUS_NOT_FOUND);
  }
  CHECK(binaries->string(0, 99).status() == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
  CHECK(!binaries->fault().has_value());

  // keys.offbin: values as LLVM stored them.
  std::vector<uint8_t> keys = read("offload/keys.offbin");
  co::offload_binaries k = co::offload_binaries::parse(keys).value();
  std::set<std::pair<std::string, std::string>> pairs;
  for (const co::offload_entry &e : k)
    for (const co::string_pair &s : k.strings(e.index)) pairs.emplace(s.key, s.value);
  CHECK(pairs.count({"eq", "a=b"}) == 1 && pairs.count({"feature", "+a,+b"}) == 1 && pairs.count({"empty", ""}) == 1);

  // The packager's command for single.offbin, through image_arguments and
  // the writer: LLVM 22's bytes.
  co::result<co::image_arguments> args =
      co::image_arguments::parse("file=inputs/single.o,kind=openmp,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+");
  CHECK(args && args->size() == 4);
  if (args) {
    co::image_input image;
    for (const co::string_pair &p : *args) {
      if (p.key == "kind") image.offload_kind = co::offload_kind_from_name(p.value);
      else if (p.key != "file") image.strings.push_back(p);
    }
    CHECK(image.offload_kind == 1 && image.strings.size() == 2);
    image.image_kind = co::image_kind_from_extension("o");
    std::vector<uint8_t> input = read("offload/inputs/single.o");
    image.image = input;
    co::result<co::buffer> written = co::write_offload_binaries({image});
    CHECK(written && same(*written, read("offload/single.offbin")));
  }
  co::result<co::image_arguments> joined = co::image_arguments::parse("feature=+a,feature=+b");
  CHECK(joined && joined->size() == 1 && (*joined)[0].key == "feature" && (*joined)[0].value == "+a,+b");
  CHECK(co::image_kind_from_extension("bc") == 2 && co::offload_kind_from_name("hip") == 4);
  CHECK(co::image_kind_name(2, 0) == "bc" && co::offload_kind_name(8) == "sycl");

  // Version 3, compressed: read back through the handle.
  std::vector<co::image_input> images;
  for (const co::offload_entry &e : *binaries) {
    co::image_input in;
    in.image_kind = e.image_kind;
    in.offload_kind = e.offload_kind;
    in.image = e.image;
    for (const co::string_pair &s : binaries->strings(e.index)) in.strings.push_back(s);
    images.push_back(in);
  }
  co::result<co::buffer> v3 = co::write_offload_binaries(images, 3, CLANGOFFLOAD_COMPRESSION_ZSTD);
  CHECK(v3.has_value());
  if (v3) {
    co::result<co::offload_binaries> back = co::offload_binaries::parse(*v3);
    CHECK(back && back->size() == 9);
    for (std::size_t i = 0; back && i < back->size() && i < binaries->size(); ++i) {
      CHECK((*back)[i].compressed && (*back)[i].version == 3);
      CHECK(same((*back)[i].image, (*binaries)[i].image) && (*back)[i].arch == (*binaries)[i].arch);
    }
  }

  // Device images point into the buffer, one per image.
  co::result<co::device_images> filled = co::fill_device_images(multi);
  CHECK(filled && filled->images.size() == 9 && filled->skipped_compressed == 0);
  for (std::size_t i = 0; filled && i < filled->images.size(); ++i) {
    co::offload_entry e = (*binaries)[i];
    CHECK(filled->images[i].ImageStart == e.image.data());
    CHECK(filled->images[i].ImageEnd == e.image.data() + e.image.size());
  }
  CHECK(co::offload_binaries::parse(std::string_view("nope")).status() == CLANGOFFLOAD_STATUS_UNKNOWN_CONTAINER);
}

void test_object_and_archive() {
  // An object-flavour bundle made by LLVM 22.
  std::vector<uint8_t> bundled = read("object/bundled-x86_64.o");
  co::result<co::object_bundle> object = co::object_bundle::parse(bundled);
  CHECK(object && sorted_unique(bundle_ids(*object)) == sorted_unique(lines("object/bundled-x86_64.o.list")));
  if (object) {
    std::size_t hosts = 0;
    for (const co::object_bundle_entry &e : *object) {
      hosts += e.host_marker;
      CHECK(inside(e.payload, bundled) && e.section_index > 0);
      if (e.id == "hip-amdgcn-amd-amdhsa--gfx906") CHECK(same(e.payload, read("object/hip.payload")));
    }
    CHECK(hosts == 1 && !object->fault().has_value());
    co::result<co::buffer> host = object->host_object();
    CHECK(host && host->size() > 0 && !co::object_bundle::parse(*host)->size());
    // Written again from the host object: LLVM 22's bytes.
    std::vector<uint8_t> plain_host = read("object/x86_64.o");
    std::vector<co::entry_input> entries;
    for (const co::object_bundle_entry &e : *object) entries.push_back({e.id, e.payload});
    co::result<co::buffer> again = co::write_object_bundle(plain_host, entries);
    CHECK(again && same(*again, bundled));
  }

  // An archive of bundles: member names as llvm-ar t printed them; written
  // again byte for byte.
  std::vector<uint8_t> data = read("archive/gnu-bundles.a");
  co::result<co::archive> archive = co::archive::parse(data);
  CHECK(archive && !archive->fault().has_value());
  if (archive) {
    std::vector<std::string> names;
    std::vector<co::entry_input> members;
    for (const co::archive_member &m : *archive) {
      names.emplace_back(m.name);
      members.push_back({m.name, m.data});
      CHECK(inside(m.data, data) && m.data.data() == data.data() + m.data_offset);
      CHECK(co::bundle::parse(m.data).has_value());
    }
    CHECK(names == lines("archive/gnu-bundles.list"));
    co::result<co::buffer> again = co::write_archive(members);
    CHECK(again && same(*again, data));
    // The buffer is move-only and releasable.
    if (again) {
      co::buffer moved = std::move(*again);
      CHECK(again->empty() && moved.size() == data.size());  // NOLINT(bugprone-use-after-move)
      clangoffload_buffer raw = moved.release();
      CHECK(moved.empty() && raw.len == data.size());
      clangoffload_buffer_free(&raw);
    }
  }
  co::result<std::string> name =
      co::device_member_name("libdevice-with-a-long-name.bc", "openmp-amdgcn-amd-amdhsa--gfx906");
  std::vector<std::string> unbundled = lines("archive/unbundle-bundles-gfx906.list");
  CHECK(name && std::find(unbundled.begin(), unbundled.end(), *name) != unbundled.end() && name->size() > 64);
  CHECK(co::archive::parse(std::string_view("!<thin>\n")).status() == CLANGOFFLOAD_STATUS_THIN_ARCHIVE);
}

void test_ids() {
  co::result<co::entry_id> id = co::parse_entry_id("hip-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+");
  CHECK(id && id->kind == "hip" && id->arch == "amdgcn" && id->vendor == "amd" && id->os == "amdhsa");
  CHECK(id && id->env.empty() && id->target_id == "gfx9-4-generic:xnack+" && id->known_kind && id->known_arch);
  CHECK(co::parse_entry_id("hip-amdgcn-amd").status() == CLANGOFFLOAD_STATUS_ENTRY_ID_TOO_FEW_COMPONENTS);
  CHECK(co::normalize_entry_id("hip-amdgcn-amd-amdhsa-unknown-gfx906").value_or("") == "hip-amdgcn-amd-amdhsa--gfx906");
  CHECK(co::entry_id_is_compatible("hipv4-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack-")
            .value_or(false));
  CHECK(!co::entry_id_is_compatible("hip-amdgcn-amd-amdhsa--gfx906", "openmp-amdgcn-amd-amdhsa--gfx906")
             .value_or(true));
  CHECK(co::entry_id_is_compatible("hip-amdgcn-amd-amdhsa--gfx906", "openmp-amdgcn-amd-amdhsa--gfx906",
                                   CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE)
            .value_or(false));
  auto conflict =
      co::find_conflicting_entry_ids({"hip-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906"});
  CHECK(conflict && conflict->has_value() && **conflict == std::make_pair(std::size_t{1}, std::size_t{0}));
  auto no_conflict = co::find_conflicting_entry_ids({"hip-amdgcn-amd-amdhsa--gfx906"});
  CHECK(no_conflict && !no_conflict->has_value());

  co::result<co::target_id> fiji = co::parse_target_id("fiji");
  CHECK(fiji && fiji->processor == "gfx803" && fiji->xnack == CLANGOFFLOAD_FEATURE_ANY);
  co::result<co::target_id> full = co::parse_target_id("gfx90a:xnack-:sramecc+");
  CHECK(full && full->xnack == CLANGOFFLOAD_FEATURE_OFF && full->sramecc == CLANGOFFLOAD_FEATURE_ON);
  CHECK(co::parse_target_id("gfx1030:xnack+").status() == CLANGOFFLOAD_STATUS_TARGET_ID_UNSUPPORTED_FEATURE);
  CHECK(co::canonicalize_target_id("gfx90a:xnack-:sramecc+").value_or("") == "gfx90a:sramecc+:xnack-");
  CHECK(co::canonicalize_target_id("gfx90a:xnack").status() == CLANGOFFLOAD_STATUS_TARGET_ID_MISSING_SIGN);
  CHECK(co::target_id_is_compatible("gfx90a", "gfx90a:xnack+").value_or(false));
  CHECK(!co::target_id_is_compatible("gfx90a:xnack+", "gfx90a").value_or(true));

  CHECK(co::amdgpu_target_id(read("compressed/inputs/tu1-gfx906.o")).value_or("") == "gfx906");
  CHECK(co::amdgpu_target_id(read("compressed/inputs/tu1-gfx90a-xnack.o")).value_or("") == "gfx90a:xnack+");
  CHECK(co::amdgpu_target_id(read("object/x86_64.o")).status() == CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(co::amdgpu_target_id(read("compressed/inputs/host.s")).status() == CLANGOFFLOAD_STATUS_NOT_ELF);
}

// The layout function reproduces LLVM 22's bundle.
void test_layout() {
  std::vector<uint8_t> expected = read("llvm22/hip-4096.bundle");
  std::vector<uint8_t> p906 = read("inputs/gfx906.co"), p90a = read("inputs/gfx90a-xnack.co");
  co::result<co::bundle_layout> layout = co::layout_bundle(
      {"host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"},
      {0, p906.size(), p90a.size()}, 4096);
  CHECK(layout && layout->total_size == expected.size() && layout->offsets.size() == 3);
  if (layout && layout->total_size == expected.size()) {
    std::vector<uint8_t> out(expected.size(), 0);
    std::copy(layout->header.begin(), layout->header.end(), out.begin());
    std::copy(p906.begin(), p906.end(), out.begin() + static_cast<std::ptrdiff_t>(layout->offsets[1]));
    std::copy(p90a.begin(), p90a.end(), out.begin() + static_cast<std::ptrdiff_t>(layout->offsets[2]));
    CHECK(out == expected);
  }
  CHECK(co::layout_bundle({"a"}, {1}, 0).status() == CLANGOFFLOAD_STATUS_ZERO_ALIGNMENT);
  CHECK(co::layout_bundle({"a"}, {}, 1).status() == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
}

// value() on an error: throws with exceptions, aborts without.
int value_on_error() {
#if HAVE_EXCEPTIONS
  try {
    (void)co::bundle::parse(std::string_view("hello")).value();
  } catch (const co::exception &e) {
    std::cout << "caught status " << e.status() << ": " << e.what() << '\n';
    return 0;
  }
  return 1;
#else
  (void)co::bundle::parse(std::string_view("hello")).value();
  std::cout << "value() returned\n";
  return 1;
#endif
}

}  // namespace

void test_cuda_fatbins() {
  std::vector<uint8_t> so = read("cuda/nvcc-rdc-linked.so");
  co::result<co::cuda_fatbins> f = co::cuda_fatbins::parse(so, "nvcc-rdc-linked");
  CHECK(f && f->fatbin_count() == 3 && f->size() == 5);
  if (!f) return;
  CHECK(f->fatbin(0).section == ".nv_fatbin" && f->fatbin(1).section == "__nv_relfatbin");
  CHECK((*f)[0].name == "nvcc-rdc-linked.1.sm_80.cubin" && (*f)[2].name == "nvcc-rdc-linked.1.sm_80.ptx");
  std::size_t n = 0;
  for (const co::cuda_entry &e : *f) n += e.raw.arch == 80 && inside(e.payload, so);
  CHECK(n == 5);
  co::result<co::buffer> image = f->image(1);
  CHECK(image && image->size() == 3456 && image->data()[0] == 0x7f);
  co::result<co::cuda_selection> chosen = f->select(1, 86);
  CHECK(chosen && chosen->entry == 1 && chosen->match == CLANGOFFLOAD_CUDA_MATCH_CUBIN);
  CHECK(f->select(1, 75).status() == CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(!f->fault().has_value());
  CHECK(f->fatbin(0).member.empty());
  // A static library: each fat binary names its member.
  std::vector<uint8_t> lib = read("cuda/nvcc-lib.a");
  co::result<co::cuda_fatbins> l = co::cuda_fatbins::parse(lib, "nvcc-lib");
  CHECK(l && l->fatbin_count() == 2 && l->size() == 4);
  if (!l) return;
  CHECK(l->fatbin(1).member == "tmpxft_00002ba0_00000000-20_b.o" && (*l)[2].name == "nvcc-lib.2.sm_80.cubin");
}

void test_cuda_write_and_prune() {
  std::vector<uint8_t> cubin = read("cuda/inputs/k80.cubin"), ptx = read("cuda/inputs/k80.ptx");
  auto entry = [](uint16_t kind, const std::vector<uint8_t> &data) {
    clangoffload_cuda_new_entry e{};
    e.kind = kind;
    e.arch = 80;
    e.data = clangoffload_bytes{data.data(), data.size()};
    return e;
  };
  std::vector<clangoffload_cuda_new_entry> entries{entry(2, cubin), entry(1, ptx)};
  co::result<std::vector<uint8_t>> written = co::cuda_fatbin_write(entries);
  CHECK(written && *written == read("cuda/raw-default.fatbin"));
  written = co::cuda_fatbin_write(entries, CLANGOFFLOAD_CUDA_COMPRESS_SPEED, CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL);
  CHECK(written && *written == read("cuda/raw-lz4.fatbin"));
  CHECK(co::cuda_fatbin_write(entries, 99).status() == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
  if (!written) return;
  std::vector<clangoffload_cuda_target> keep{clangoffload_cuda_target{2, 80, 0}};
  co::result<std::vector<uint8_t>> pruned = co::cuda_fatbin_prune(*written, keep);
  CHECK(pruned && pruned->size() < written->size());
  if (pruned) {
    co::result<co::cuda_fatbins> f = co::cuda_fatbins::parse(*pruned);
    CHECK(f && f->size() == 1 && (*f)[0].raw.kind == 2);
  }
  std::vector<uint8_t> object = read("cuda/clang-multi-ptx.o");
  std::size_t size = object.size();
  co::result<std::size_t> changed = co::cuda_fatbin_prune_in_place(object, keep);
  CHECK(changed && *changed == 1 && object.size() == size);
}

int main(int argc, char **argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--value-on-error") return value_on_error();
  if (argc != 2) {
    std::cerr << "usage: wrapper_test FIXTURES_DIR | --value-on-error\n";
    return 2;
  }
  fixtures = argv[1];
  std::cout << "exceptions: " << (HAVE_EXCEPTIONS ? "on" : "off") << '\n';
  test_basics();
  test_bundles();
  test_bundle_without_handle();
  test_malformed();
  test_compressed();
  test_containers();
  test_scan();
  test_elf();
  test_offload_binaries();
  test_cuda_fatbins();
  test_cuda_write_and_prune();
  test_object_and_archive();
  test_ids();
  test_layout();
  std::cout << "checks: " << checks << " failed: " << failures << '\n';
  return failures == 0 ? 0 : 1;
}
