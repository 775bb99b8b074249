/*
 * clangoffload.hpp: a header-only C++17 wrapper over the C ABI in
 * clangoffload.h. Link with libclangoffload as for C; nothing here needs
 * compiling into the library.
 *
 * What it adds to the C ABI, and nothing more:
 *
 *  - Move-only RAII handles (`bundle`, `text_bundle`, `object_bundle`,
 *    `archive`, `offload_binaries`, `image_arguments`, `cuda_fatbins`, `buffer`) that call the
 *    matching `clangoffload_*_free`.
 *  - Views: `std::string_view` for IDs, names and messages, and `bytes` (a
 *    span of `const uint8_t`) for payloads. Listing copies no payload.
 *  - Range-for over the entries of every handle, over the containers of a
 *    buffer (`containers`), over everything `scan` finds, and over the offload
 *    sections of an ELF file (`elf_offload_sections`).
 *  - Errors as values: every fallible function returns `result<T>`, which
 *    holds either a `T` or an `error` (status, offset, entry, message, as the
 *    C ABI's `clangoffload_error`). `result<T>::value()` throws
 *    `clangoffload::exception` on an error, so callers who prefer exceptions
 *    write `parse(...).value()`; with `CLANGOFFLOAD_NO_EXCEPTIONS` defined, or
 *    when compiling without exceptions (`-fno-exceptions`), `value()` on an
 *    error prints the message to stderr and calls `std::abort()` instead.
 *    Nothing else in this header throws, except `std::bad_alloc` from the
 *    standard containers it fills (functions that return `std::vector` or
 *    `std::string`).
 *
 * Lifetimes (the C ABI's, restated):
 *
 *  - A `bytes` or `std::string_view` view borrows the memory it points into.
 *    Views returned by the parsing functions borrow the buffer you parsed.
 *  - A handle (`bundle`, `archive`, ...) borrows the buffer it was parsed
 *    from: keep that buffer alive and unchanged until the handle is
 *    destroyed. Entries obtained from a handle borrow that same buffer (an
 *    entry of a compressed OffloadBinary borrows the handle instead, and the
 *    pairs of `image_arguments` borrow the handle and the argument), so they
 *    stay valid as long as both the buffer and the handle do.
 *  - A `buffer` owns memory the library allocated (what the writers return);
 *    views into it live as long as the `buffer`.
 *  - `bytes` converts implicitly from a `std::vector<uint8_t>` and a
 *    `std::string_view`: do not make one from a temporary you then drop.
 *
 * Iteration error model. Handles iterate by index over what was parsed, which
 * cannot fail. The cursor walks (`containers`, `scan`, `elf_offload_sections`,
 * and `bundle_entries`, the handle-free walk over a bundle) are single-pass
 * input ranges that keep the first error they meet: the loop simply ends
 * there, and `range.error()` says what went wrong afterwards (`std::nullopt`
 * after a complete walk). So keep the range in a variable when you want to
 * know:
 *
 *     auto walk = clangoffload::containers(data);
 *     for (const clangoffload::container &c : walk) { ... }
 *     if (walk.error()) report(*walk.error());
 *
 * `containers`, `scan` and `bundle_entries` cannot go on after an error, so
 * the loop ends there; `elf_offload_sections` skips a damaged section header
 * (as the C ABI allows) and keeps going, ending only on an error about the
 * whole file; its `error()` is the first error met.
 *
 * Thread safety as in C: functions are thread-safe and a handle may be read
 * from several threads at once; a range object must not be shared.
 */

#ifndef CLANGOFFLOAD_HPP
#define CLANGOFFLOAD_HPP

#include "clangoffload.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#if !defined(CLANGOFFLOAD_NO_EXCEPTIONS) && !defined(__cpp_exceptions) && !defined(_CPPUNWIND)
#define CLANGOFFLOAD_NO_EXCEPTIONS 1
#endif

namespace clangoffload {

// ---------------------------------------------------------------------------
// Library information

// The library version, e.g. "0.1.0" (static storage).
inline std::string_view version() noexcept { return clangoffload_version(); }

// A static English message for any status value ("unknown status" for values
// this library does not define).
inline std::string_view status_message(uint32_t status) noexcept {
  return clangoffload_status_message(status);
}

// ---------------------------------------------------------------------------
// bytes: a borrowed, read-only byte range

// `size()` bytes at `data()`, borrowed (never owned, never copied). Like
// `std::span<const uint8_t>`, plus conversion to `std::string_view` and to the
// C ABI's `clangoffload_bytes`.
class bytes {
 public:
  using value_type = uint8_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using const_pointer = const uint8_t *;
  using pointer = const uint8_t *;
  using const_reference = const uint8_t &;
  using reference = const uint8_t &;
  using const_iterator = const uint8_t *;
  using iterator = const uint8_t *;

  constexpr bytes() noexcept = default;
  constexpr bytes(const uint8_t *data, std::size_t size) noexcept : data_(data), size_(size) {}
  // From the C ABI's view.
  constexpr bytes(clangoffload_bytes view) noexcept : data_(view.ptr), size_(view.len) {}
  // The characters of a string, as bytes (borrowed).
  bytes(std::string_view text) noexcept
      : data_(reinterpret_cast<const uint8_t *>(text.data())), size_(text.size()) {}
  // The contents of a vector (borrowed: keep the vector alive and unchanged).
  bytes(const std::vector<uint8_t> &vector) noexcept : data_(vector.data()), size_(vector.size()) {}
  // Any memory (borrowed).
  static bytes from(const void *data, std::size_t size) noexcept {
    return bytes(static_cast<const uint8_t *>(data), size);
  }

  constexpr const uint8_t *data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr const uint8_t *begin() const noexcept { return data_; }
  constexpr const uint8_t *end() const noexcept { return data_ + size_; }
  // Unchecked: `i < size()`.
  constexpr const uint8_t &operator[](std::size_t i) const noexcept { return data_[i]; }
  // The bytes from `offset` on (at most `count`); empty past the end.
  constexpr bytes subspan(std::size_t offset,
                          std::size_t count = static_cast<std::size_t>(-1)) const noexcept {
    if (offset > size_) return bytes(data_ + size_, 0);
    std::size_t left = size_ - offset;
    return bytes(data_ + offset, count < left ? count : left);
  }
  // The same bytes as characters.
  std::string_view str() const noexcept {
    return std::string_view(reinterpret_cast<const char *>(data_), size_);
  }
  explicit operator std::string_view() const noexcept { return str(); }
  // The C ABI's view of the same bytes.
  constexpr clangoffload_bytes c() const noexcept { return clangoffload_bytes{data_, size_}; }
  // A copy (the only function of `bytes` that copies).
  std::vector<uint8_t> to_vector() const { return std::vector<uint8_t>(begin(), end()); }

 private:
  const uint8_t *data_ = nullptr;
  std::size_t size_ = 0;
};

namespace detail {
inline clangoffload_bytes c_bytes(std::string_view text) noexcept {
  return clangoffload_bytes{reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}
inline std::string_view view(clangoffload_bytes b) noexcept {
  return std::string_view(reinterpret_cast<const char *>(b.ptr), b.len);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Errors

// What went wrong and where: the C ABI's `clangoffload_error`. Functions that
// read a container fill every field; for the others (a NULL or out-of-range
// argument, "not found") only the status is known: the offset is then 0, the
// entry `CLANGOFFLOAD_NO_ENTRY` and the message the status message.
class error {
 public:
  // From a status alone.
  explicit error(uint32_t status) noexcept : raw_() {
    raw_.status = status;
    raw_.offset = 0;
    raw_.entry = CLANGOFFLOAD_NO_ENTRY;
    std::string_view text = ::clangoffload::status_message(status);
    std::size_t n = text.size() < sizeof raw_.message - 1 ? text.size() : sizeof raw_.message - 1;
    std::memcpy(raw_.message, text.data(), n);
    raw_.message[n] = '\0';
  }
  // From what a C function filled in.
  explicit error(const clangoffload_error &raw) noexcept : raw_(raw) {
    raw_.message[sizeof raw_.message - 1] = '\0';
  }
  // From a C function's status and the error record it was given: the record
  // when the function filled it (it then holds that same status), else the
  // status alone.
  static error from_call(uint32_t status, const clangoffload_error &raw) noexcept {
    if (raw.status == status) return error(raw);
    return error(status);
  }

  // A `CLANGOFFLOAD_STATUS_*` value (take it as `uint32_t`, as in C).
  uint32_t status() const noexcept { return raw_.status; }
  // Byte offset of the offending field from the start of the input given.
  uint64_t offset() const noexcept { return raw_.offset; }
  // Index of the offending entry, or `CLANGOFFLOAD_NO_ENTRY`.
  uint64_t entry() const noexcept { return raw_.entry; }
  bool has_entry() const noexcept { return raw_.entry != CLANGOFFLOAD_NO_ENTRY; }
  // The precise message, with the values at fault (storage of this object).
  std::string_view message() const noexcept { return raw_.message; }
  // The status's general message (static storage).
  std::string_view status_message() const noexcept { return clangoffload::status_message(raw_.status); }
  const clangoffload_error &c() const noexcept { return raw_; }

 private:
  clangoffload_error raw_;
};

// What `result<T>::value()` throws: a `std::runtime_error` whose `what()` is
// the error's message, carrying the whole `error`.
class exception : public std::runtime_error {
 public:
  explicit exception(const ::clangoffload::error &e)
      : std::runtime_error(std::string(e.message())), error_(e) {}
  const ::clangoffload::error &error() const noexcept { return error_; }
  uint32_t status() const noexcept { return error_.status(); }
  uint64_t offset() const noexcept { return error_.offset(); }
  uint64_t entry() const noexcept { return error_.entry(); }

 private:
  ::clangoffload::error error_;
};

namespace detail {
// Throws `exception(e)`, or without exceptions prints and aborts.
[[noreturn]] inline void fail(const ::clangoffload::error &e) {
#if defined(CLANGOFFLOAD_NO_EXCEPTIONS)
  std::fprintf(stderr, "clangoffload: %s (status %u)\n", e.c().message,
               static_cast<unsigned>(e.status()));
  std::abort();
#else
  throw ::clangoffload::exception(e);
#endif
}
}  // namespace detail

// Either a `T` or an `error`. Test it (`if (r)`, `has_value()`), then read the
// value (`*r`, `r->`, unchecked) or the error (`error()`, only when there is no
// value). `value()` checks: on an error it throws `exception` (or aborts, see
// the top of this file).
template <class T>
class result {
 public:
  result(const T &value) : state_(std::in_place_index<0>, value) {}
  result(T &&value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(const ::clangoffload::error &e) : state_(std::in_place_index<1>, e) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  // Unchecked access: only when `has_value()`.
  T &operator*() & noexcept { return *std::get_if<0>(&state_); }
  const T &operator*() const & noexcept { return *std::get_if<0>(&state_); }
  T &&operator*() && noexcept { return std::move(*std::get_if<0>(&state_)); }
  T *operator->() noexcept { return std::get_if<0>(&state_); }
  const T *operator->() const noexcept { return std::get_if<0>(&state_); }

  // Checked access: throws `exception` (or aborts) on an error.
  T &value() & {
    if (!has_value()) detail::fail(error());
    return **this;
  }
  const T &value() const & {
    if (!has_value()) detail::fail(error());
    return **this;
  }
  T &&value() && {
    if (!has_value()) detail::fail(error());
    return std::move(**this);
  }
  // The value, or `fallback` on an error.
  template <class U>
  T value_or(U &&fallback) const & {
    return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
  }

  // Only when `!has_value()`.
  const ::clangoffload::error &error() const noexcept { return *std::get_if<1>(&state_); }
  // The status: `CLANGOFFLOAD_STATUS_OK` with a value.
  uint32_t status() const noexcept { return has_value() ? 0u : error().status(); }

 private:
  std::variant<T, ::clangoffload::error> state_;
};

// The result of a function that returns nothing but may fail.
template <>
class result<void> {
 public:
  result() noexcept = default;
  result(const ::clangoffload::error &e) : error_(e) {}

  bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (error_) detail::fail(*error_);
  }
  const ::clangoffload::error &error() const noexcept { return *error_; }
  uint32_t status() const noexcept { return error_ ? error_->status() : 0u; }

 private:
  std::optional<::clangoffload::error> error_;
};

namespace detail {
// Runs `call(clangoffload_error *)` and turns a failing status into an error.
template <class Call>
inline result<void> check(Call &&call) {
  clangoffload_error raw{};
  uint32_t status = static_cast<uint32_t>(call(&raw));
  if (status != CLANGOFFLOAD_STATUS_OK) return ::clangoffload::error::from_call(status, raw);
  return {};
}
// The same for functions without an error record.
inline result<void> check_status(uint32_t status) {
  if (status != CLANGOFFLOAD_STATUS_OK) return ::clangoffload::error(status);
  return {};
}
// For functions that write text into a caller buffer (NUL-terminated, length
// stored; BUFFER_TOO_SMALL with the length needed): `call(buf, cap, &len)`.
template <class Call>
inline result<std::string> text(Call &&call) {
  std::string out(64, '\0');
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::size_t len = 0;
    uint32_t status = static_cast<uint32_t>(call(&out[0], out.size(), &len));
    if (status == CLANGOFFLOAD_STATUS_OK) {
      out.resize(len);
      return out;
    }
    if (status != CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) return ::clangoffload::error(status);
    out.assign(len + 1, '\0');
  }
  return ::clangoffload::error(CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
}

template <class T, void (*Free)(T *)>
struct deleter {
  void operator()(T *p) const noexcept { Free(p); }
};
template <class T, void (*Free)(T *)>
using unique_handle = std::unique_ptr<T, deleter<T, Free>>;

// A C handle's fault, as an optional error.
template <class Call>
inline std::optional<::clangoffload::error> fault(Call &&call) {
  clangoffload_error raw{};
  uint32_t status = static_cast<uint32_t>(call(&raw));
  if (status == CLANGOFFLOAD_STATUS_OK) return std::nullopt;
  return ::clangoffload::error::from_call(status, raw);
}

// `operator->` for iterators whose `operator*` returns by value.
template <class T>
struct arrow_proxy {
  T value;
  const T *operator->() const noexcept { return &value; }
};

// An input iterator over `owner[0 .. n)`, reading each item with
// `owner->operator[](i)` (by value: items are small views).
template <class Owner>
class index_iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = decltype(std::declval<const Owner &>()[std::size_t{}]);
  using difference_type = std::ptrdiff_t;
  using pointer = arrow_proxy<value_type>;
  using reference = value_type;

  index_iterator() noexcept = default;
  index_iterator(const Owner *owner, std::size_t index) noexcept : owner_(owner), index_(index) {}

  value_type operator*() const { return (*owner_)[index_]; }
  pointer operator->() const { return pointer{**this}; }
  index_iterator &operator++() noexcept {
    ++index_;
    return *this;
  }
  index_iterator operator++(int) noexcept {
    index_iterator old = *this;
    ++index_;
    return old;
  }
  friend bool operator==(const index_iterator &a, const index_iterator &b) noexcept {
    return a.index_ == b.index_;
  }
  friend bool operator!=(const index_iterator &a, const index_iterator &b) noexcept {
    return !(a == b);
  }

 private:
  const Owner *owner_ = nullptr;
  std::size_t index_ = 0;
};

// A single-pass input range over a C cursor walk. `Walk` provides
// `bool next(Item &)` (false at the end or on an error, which it keeps).
template <class Walk, class Item>
class cursor_range {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Item;
    using difference_type = std::ptrdiff_t;
    using pointer = const Item *;
    using reference = const Item &;

    iterator() noexcept = default;
    explicit iterator(cursor_range *range) noexcept : range_(range) {}
    const Item &operator*() const noexcept { return range_->item_; }
    const Item *operator->() const noexcept { return &range_->item_; }
    iterator &operator++() {
      range_->advance();
      return *this;
    }
    // What `it++` returns: the item it was at (a copy: the walk has moved on).
    struct postfix {
      Item item;
      const Item &operator*() const noexcept { return item; }
      const Item *operator->() const noexcept { return &item; }
    };
    postfix operator++(int) {
      postfix old{range_->item_};
      range_->advance();
      return old;
    }
    friend bool operator==(const iterator &a, const iterator &b) noexcept {
      return a.at_end() == b.at_end();
    }
    friend bool operator!=(const iterator &a, const iterator &b) noexcept { return !(a == b); }

   private:
    bool at_end() const noexcept { return range_ == nullptr || range_->done_; }
    cursor_range *range_ = nullptr;
  };

  explicit cursor_range(Walk walk) noexcept : walk_(std::move(walk)) {}
  cursor_range(const cursor_range &) = delete;
  cursor_range &operator=(const cursor_range &) = delete;
  // Moving a range invalidates its iterators.
  cursor_range(cursor_range &&) noexcept = default;
  cursor_range &operator=(cursor_range &&) noexcept = default;

  // The first item (the walk starts on the first call; later calls return
  // where the walk is: the range is single-pass).
  iterator begin() {
    if (!started_) {
      started_ = true;
      advance();
    }
    return iterator(this);
  }
  iterator end() noexcept { return iterator(); }

  // The first error met, `std::nullopt` if none (yet).
  const std::optional<::clangoffload::error> &error() const noexcept { return walk_.error; }
  // Whether the walk has ended without an error.
  bool complete() const noexcept { return done_ && !walk_.error; }

 private:
  void advance() { done_ = !walk_.next(item_); }
  Walk walk_;
  Item item_{};
  bool started_ = false;
  bool done_ = false;
};
}  // namespace detail

// ---------------------------------------------------------------------------
// Owned buffers (what the writers return)

// Memory the library allocated (a `clangoffload_buffer`), freed with
// `clangoffload_buffer_free`. Move-only.
class buffer {
 public:
  buffer() noexcept = default;
  // Takes ownership of a buffer the library filled.
  explicit buffer(clangoffload_buffer raw) noexcept : raw_(raw) {}
  buffer(buffer &&other) noexcept : raw_(other.release()) {}
  buffer &operator=(buffer &&other) noexcept {
    if (this != &other) {
      clangoffload_buffer_free(&raw_);
      raw_ = other.release();
    }
    return *this;
  }
  buffer(const buffer &) = delete;
  buffer &operator=(const buffer &) = delete;
  ~buffer() { clangoffload_buffer_free(&raw_); }

  const uint8_t *data() const noexcept { return raw_.ptr; }
  uint8_t *data() noexcept { return raw_.ptr; }
  std::size_t size() const noexcept { return raw_.len; }
  bool empty() const noexcept { return raw_.len == 0; }
  const uint8_t *begin() const noexcept { return raw_.ptr; }
  const uint8_t *end() const noexcept { return raw_.ptr + raw_.len; }
  // A view of the contents, valid while this buffer lives.
  clangoffload::bytes view() const noexcept { return clangoffload::bytes(raw_.ptr, raw_.len); }
  operator clangoffload::bytes() const noexcept { return view(); }
  // Gives up ownership: free the result with `clangoffload_buffer_free`.
  clangoffload_buffer release() noexcept {
    clangoffload_buffer out = raw_;
    raw_ = clangoffload_buffer{nullptr, 0};
    return out;
  }

 private:
  clangoffload_buffer raw_{nullptr, 0};
};

namespace detail {
template <class Call>
inline result<buffer> write(Call &&call) {
  clangoffload_buffer raw{nullptr, 0};
  result<void> done = check([&](clangoffload_error *e) { return call(&raw, e); });
  if (!done) return done.error();
  return buffer(raw);
}
}  // namespace detail

// An entry to write (text bundle, object bundle, archive member): borrowed
// for the duration of the call.
struct entry_input {
  std::string_view id;  // entry ID, or member name for archives
  clangoffload::bytes payload;
};

namespace detail {
inline std::vector<clangoffload_entry_input> c_entries(const std::vector<entry_input> &entries) {
  std::vector<clangoffload_entry_input> out;
  out.reserve(entries.size());
  for (const entry_input &e : entries) out.push_back({c_bytes(e.id), e.payload.c()});
  return out;
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Binary bundles

// One bundle entry; `id` and `payload` borrow the parsed buffer.
struct bundle_entry {
  // `index` of an entry found by the handle-free lookups
  // (`find_compatible_entry`, `select_entry_for_device`), which do not say.
  static constexpr std::size_t unknown_index = static_cast<std::size_t>(-1);

  std::size_t index = 0;        // file order
  std::string_view id;          // as stored (not necessarily UTF-8)
  clangoffload::bytes payload;  // the code object
  uint64_t offset = 0;          // of the payload in the bundle
  uint64_t descriptor_offset = 0;
};

// What `bundle::select_for_device` chose.
struct device_selection {
  bundle_entry entry;
  clangoffload_device_match match;  // CLANGOFFLOAD_DEVICE_MATCH_*
};

// A parsed binary bundle (`__CLANG_OFFLOAD_BUNDLE__`). Borrows the buffer it
// was parsed from. Iterable: `for (bundle_entry e : b)`.
class bundle {
 public:
  // Parses `data`; `flags` may be `CLANGOFFLOAD_PARSE_LENIENT`.
  static result<bundle> parse(clangoffload::bytes data, uint32_t flags = 0) {
    clangoffload_bundle *raw = nullptr;
    result<void> done = detail::check([&](clangoffload_error *e) {
      return clangoffload_bundle_parse(data.data(), data.size(), flags, &raw, e);
    });
    if (!done) return done.error();
    return bundle(raw);
  }

  std::size_t size() const noexcept { return clangoffload_bundle_entry_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  // Unchecked: `i < size()`.
  bundle_entry operator[](std::size_t i) const noexcept {
    clangoffload_bundle_entry raw{};
    clangoffload_bundle_get_entry(h_.get(), i, &raw);
    return bundle_entry{i, detail::view(raw.id), raw.payload, raw.offset, raw.descriptor_offset};
  }
  result<bundle_entry> at(std::size_t i) const {
    if (i >= size()) return ::clangoffload::error(CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
    return (*this)[i];
  }
  detail::index_iterator<bundle> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<bundle> end() const noexcept { return {this, size()}; }

  // Size of the header (strictly parsed bundles; 0 for lenient ones).
  uint64_t header_len() const noexcept { return clangoffload_bundle_header_len(h_.get()); }
  // The first bad descriptor of a leniently parsed bundle, if any.
  std::optional<::clangoffload::error> fault() const {
    return detail::fault([&](clangoffload_error *e) { return clangoffload_bundle_fault(h_.get(), e); });
  }

  // The first entry (file order) whose code object is compatible with the
  // bundle entry ID `target` (e.g. `hipv4-amdgcn-amd-amdhsa--gfx906`), by the
  // bundler's rules; `flags` may be `CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE`.
  // An error with `CLANGOFFLOAD_STATUS_NOT_FOUND` if none is.
  result<bundle_entry> find_compatible(std::string_view target, uint32_t flags = 0) const {
    std::size_t index = 0;
    result<void> done = detail::check_status(clangoffload_bundle_find_compatible(
        h_.get(), target.data(), target.size(), flags, &index));
    if (!done) return done.error();
    return (*this)[index];
  }
  // The entry the HIP runtime would load on a device with AMDGPU target ID
  // `device` (`gfx90a:sramecc+:xnack-`): native, then generic, then SPIR-V.
  // `CLANGOFFLOAD_STATUS_NOT_FOUND` if nothing fits.
  result<device_selection> select_for_device(std::string_view device) const {
    std::size_t index = 0;
    clangoffload_device_match how = CLANGOFFLOAD_DEVICE_MATCH_NATIVE;
    result<void> done = detail::check_status(clangoffload_bundle_select_for_device(
        h_.get(), device.data(), device.size(), &index, &how));
    if (!done) return done.error();
    return device_selection{(*this)[index], how};
  }
  // Duplicate IDs, overlapping payloads, payloads in the header, trailing
  // bytes: every finding.
  result<std::vector<clangoffload_bundle_diagnostic>> validate() const {
    std::size_t count = 0;
    result<void> done = detail::check_status(clangoffload_bundle_validate(h_.get(), nullptr, 0, &count));
    std::vector<clangoffload_bundle_diagnostic> out(count);
    if (done && count != 0) {
      done = detail::check_status(clangoffload_bundle_validate(h_.get(), out.data(), out.size(), &count));
      out.resize(count < out.size() ? count : out.size());
    }
    if (!done) return done.error();
    return out;
  }

  const clangoffload_bundle *get() const noexcept { return h_.get(); }

 private:
  explicit bundle(clangoffload_bundle *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_bundle, clangoffload_bundle_free> h_;
};

// Without a handle and without allocating (the bundle API of the library's
// allocator-free embedded build): the entries of the bundle in `data`, walked
// in file order with `clangoffload_bundle_next_entry`, each descriptor checked
// as it is reached. Single-pass; a bad descriptor ends the loop after the
// entries in front of it, with its error in `error()`.
namespace detail {
struct bundle_walk {
  clangoffload::bytes data;
  clangoffload_bundle_cursor cursor{0, 0};
  std::optional<::clangoffload::error> error;
  bool next(bundle_entry &item) {
    if (error) return false;
    clangoffload_bundle_entry raw{};
    clangoffload_error e{};
    uint64_t index = cursor.index;
    uint32_t status =
        static_cast<uint32_t>(clangoffload_bundle_next_entry(data.data(), data.size(), &cursor, &raw, &e));
    if (status == CLANGOFFLOAD_STATUS_END) return false;
    if (status != CLANGOFFLOAD_STATUS_OK) {
      error = ::clangoffload::error::from_call(status, e);
      return false;
    }
    item = bundle_entry{static_cast<std::size_t>(index), view(raw.id), raw.payload, raw.offset,
                        raw.descriptor_offset};
    return true;
  }
};
}  // namespace detail
using bundle_entry_range = detail::cursor_range<detail::bundle_walk, bundle_entry>;
inline bundle_entry_range bundle_entries(clangoffload::bytes data) {
  return bundle_entry_range(detail::bundle_walk{data, clangoffload_bundle_cursor{0, 0}, std::nullopt});
}

// `bundle::find_compatible` without a handle or an allocation: the bundle in
// `data` is checked as `bundle::parse` checks it (its error, if any, is the
// result), then the first compatible entry returned (`index` unknown).
inline result<bundle_entry> find_compatible_entry(clangoffload::bytes data, std::string_view target,
                                                  uint32_t flags = 0) {
  clangoffload_bundle_entry raw{};
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_bundle_find_compatible_entry(data.data(), data.size(), target.data(), target.size(),
                                                     flags, &raw, e);
  });
  if (!done) return done.error();
  return bundle_entry{bundle_entry::unknown_index, detail::view(raw.id), raw.payload, raw.offset,
                      raw.descriptor_offset};
}

// `bundle::select_for_device` without a handle or an allocation (`index`
// unknown).
inline result<device_selection> select_entry_for_device(clangoffload::bytes data, std::string_view device) {
  clangoffload_bundle_entry raw{};
  clangoffload_device_match how = CLANGOFFLOAD_DEVICE_MATCH_NATIVE;
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_bundle_select_entry_for_device(data.data(), data.size(), device.data(), device.size(),
                                                       &raw, &how, e);
  });
  if (!done) return done.error();
  return device_selection{bundle_entry{bundle_entry::unknown_index, detail::view(raw.id), raw.payload,
                                       raw.offset, raw.descriptor_offset},
                          how};
}

// The layout `clangoffload_bundle_layout` computes.
struct bundle_layout {
  std::vector<uint8_t> header;    // write it at offset 0
  std::vector<uint64_t> offsets;  // each payload's offset
  uint64_t total_size = 0;        // the bundle's size (zeros in the gaps)
};

// Lays out a bundle of entries `ids` with payload sizes `sizes`, aligned to
// `align`, as clang-offload-bundler does.
inline result<bundle_layout> layout_bundle(const std::vector<std::string_view> &ids,
                                           const std::vector<uint64_t> &sizes, uint64_t align) {
  if (ids.size() != sizes.size()) return error(CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
  std::vector<clangoffload_bytes> c_ids;
  c_ids.reserve(ids.size());
  for (std::string_view id : ids) c_ids.push_back(detail::c_bytes(id));
  bundle_layout out;
  out.offsets.resize(ids.size());
  std::size_t header_len = 0;
  uint32_t status = clangoffload_bundle_layout(c_ids.data(), sizes.data(), ids.size(), align, nullptr, 0,
                                               &header_len, out.offsets.data(), &out.total_size);
  if (status == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) {
    out.header.resize(header_len);
    status = clangoffload_bundle_layout(c_ids.data(), sizes.data(), ids.size(), align, out.header.data(),
                                        out.header.size(), &header_len, out.offsets.data(), &out.total_size);
  }
  if (status != CLANGOFFLOAD_STATUS_OK) return error(status);
  out.header.resize(header_len);
  return out;
}

// ---------------------------------------------------------------------------
// Text bundles

struct text_bundle_entry {
  std::size_t index = 0;
  std::string_view id;
  clangoffload::bytes payload;
  uint64_t offset = 0;        // of the payload
  uint64_t start_offset = 0;  // of the start marker
  uint64_t end_offset = 0;    // where the end marker's line ends
};

// A parsed text bundle (`-type=s`, `ll`, `i`, ...). Borrows the buffer.
class text_bundle {
 public:
  // `comment` is a `CLANGOFFLOAD_COMMENT_*` (see `text_comment_for_type`).
  static result<text_bundle> parse(clangoffload::bytes data, uint32_t comment, uint32_t flags = 0) {
    clangoffload_text_bundle *raw = nullptr;
    result<void> done = detail::check([&](clangoffload_error *e) {
      return clangoffload_text_bundle_parse(data.data(), data.size(), comment, flags, &raw, e);
    });
    if (!done) return done.error();
    return text_bundle(raw);
  }
  std::size_t size() const noexcept { return clangoffload_text_bundle_entry_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  text_bundle_entry operator[](std::size_t i) const noexcept {
    clangoffload_text_bundle_entry raw{};
    clangoffload_text_bundle_get_entry(h_.get(), i, &raw);
    return text_bundle_entry{i, detail::view(raw.id), raw.payload, raw.offset, raw.start_offset, raw.end_offset};
  }
  result<text_bundle_entry> at(std::size_t i) const {
    if (i >= size()) return ::clangoffload::error(CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
    return (*this)[i];
  }
  detail::index_iterator<text_bundle> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<text_bundle> end() const noexcept { return {this, size()}; }
  std::optional<::clangoffload::error> fault() const {
    return detail::fault([&](clangoffload_error *e) { return clangoffload_text_bundle_fault(h_.get(), e); });
  }
  const clangoffload_text_bundle *get() const noexcept { return h_.get(); }

 private:
  explicit text_bundle(clangoffload_text_bundle *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_text_bundle, clangoffload_text_bundle_free> h_;
};

// The comment (`CLANGOFFLOAD_COMMENT_*`) of bundler `-type` `type_name`;
// `CLANGOFFLOAD_STATUS_NOT_FOUND` for a type that is not text.
inline result<uint32_t> text_comment_for_type(std::string_view type_name) {
  uint32_t comment = 0;
  result<void> done = detail::check_status(clangoffload_text_comment_for_type(
      reinterpret_cast<const uint8_t *>(type_name.data()), type_name.size(), &comment));
  if (!done) return done.error();
  return comment;
}

// Writes a text bundle, byte-identical to clang-offload-bundler 22.
inline result<buffer> write_text_bundle(uint32_t comment, const std::vector<entry_input> &entries) {
  std::vector<clangoffload_entry_input> c = detail::c_entries(entries);
  return detail::write([&](clangoffload_buffer *out, clangoffload_error *e) {
    return clangoffload_text_bundle_write(comment, c.data(), c.size(), out, e);
  });
}

// ---------------------------------------------------------------------------
// Object-flavour bundles (entries as `__CLANG_OFFLOAD_BUNDLE__<id>` sections)

struct object_bundle_entry {
  std::size_t index = 0;
  std::string_view id;
  clangoffload::bytes payload;
  uint64_t offset = 0;
  uint32_t section_index = 0;
  bool host_marker = false;  // the payload is the host marker: see host_object()
};

// A parsed host object carrying bundle sections. Borrows the buffer.
class object_bundle {
 public:
  static result<object_bundle> parse(clangoffload::bytes data, uint32_t flags = 0) {
    clangoffload_object_bundle *raw = nullptr;
    result<void> done = detail::check([&](clangoffload_error *e) {
      return clangoffload_object_bundle_parse(data.data(), data.size(), flags, &raw, e);
    });
    if (!done) return done.error();
    return object_bundle(raw);
  }
  std::size_t size() const noexcept { return clangoffload_object_bundle_entry_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  object_bundle_entry operator[](std::size_t i) const noexcept {
    clangoffload_object_bundle_entry raw{};
    clangoffload_object_bundle_get_entry(h_.get(), i, &raw);
    return object_bundle_entry{i, detail::view(raw.id), raw.payload, raw.offset, raw.section_index,
                               raw.host_marker != 0};
  }
  result<object_bundle_entry> at(std::size_t i) const {
    if (i >= size()) return ::clangoffload::error(CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
    return (*this)[i];
  }
  detail::index_iterator<object_bundle> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<object_bundle> end() const noexcept { return {this, size()}; }
  std::optional<::clangoffload::error> fault() const {
    return detail::fault([&](clangoffload_error *e) { return clangoffload_object_bundle_fault(h_.get(), e); });
  }
  // The object without its bundle sections (the host entry's payload); does
  // not borrow the parsed buffer.
  result<buffer> host_object() const {
    return detail::write([&](clangoffload_buffer *out, clangoffload_error *e) {
      return clangoffload_object_bundle_host_object(h_.get(), out, e);
    });
  }
  const clangoffload_object_bundle *get() const noexcept { return h_.get(); }

 private:
  explicit object_bundle(clangoffload_object_bundle *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_object_bundle, clangoffload_object_bundle_free> h_;
};

// The ELF object `host` with one bundle section per entry, byte-identical to
// `clang-offload-bundler -type=o`.
inline result<buffer> write_object_bundle(clangoffload::bytes host, const std::vector<entry_input> &entries) {
  std::vector<clangoffload_entry_input> c = detail::c_entries(entries);
  return detail::write([&](clangoffload_buffer *out, clangoffload_error *e) {
    return clangoffload_object_bundle_write(host.data(), host.size(), c.data(), c.size(), out, e);
  });
}

// ---------------------------------------------------------------------------
// Archives

// One member; the name is bytes from the file: never use it as a path.
struct archive_member {
  std::size_t index = 0;
  std::string_view name;
  clangoffload::bytes data;
  uint64_t header_offset = 0;
  uint64_t data_offset = 0;
};

// A parsed `ar` archive (GNU or BSD). Borrows the buffer. Members are read up
// to the first damaged header, which is kept as `fault()`.
class archive {
 public:
  static result<archive> parse(clangoffload::bytes data) {
    clangoffload_archive *raw = nullptr;
    result<void> done = detail::check([&](clangoffload_error *e) {
      return clangoffload_archive_parse(data.data(), data.size(), &raw, e);
    });
    if (!done) return done.error();
    return archive(raw);
  }
  std::size_t size() const noexcept { return clangoffload_archive_member_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  archive_member operator[](std::size_t i) const noexcept {
    clangoffload_archive_member raw{};
    clangoffload_archive_get_member(h_.get(), i, &raw);
    return archive_member{i, detail::view(raw.name), raw.data, raw.header_offset, raw.data_offset};
  }
  result<archive_member> at(std::size_t i) const {
    if (i >= size()) return ::clangoffload::error(CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
    return (*this)[i];
  }
  detail::index_iterator<archive> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<archive> end() const noexcept { return {this, size()}; }
  std::optional<::clangoffload::error> fault() const {
    return detail::fault([&](clangoffload_error *e) { return clangoffload_archive_fault(h_.get(), e); });
  }
  const clangoffload_archive *get() const noexcept { return h_.get(); }

 private:
  explicit archive(clangoffload_archive *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_archive, clangoffload_archive_free> h_;
};

// A GNU archive of `members` (`id` = name), as LLVM 22 writes it.
inline result<buffer> write_archive(const std::vector<entry_input> &members) {
  std::vector<clangoffload_entry_input> c = detail::c_entries(members);
  return detail::write([&](clangoffload_buffer *out, clangoffload_error *e) {
    return clangoffload_archive_write(c.data(), c.size(), out, e);
  });
}

// The member name clang-offload-bundler gives entry `entry_id` of member
// `member_name` in a per-target archive (a name, never a path).
inline result<std::string> device_member_name(std::string_view member_name, std::string_view entry_id) {
  return detail::text([&](char *buf, std::size_t cap, std::size_t *len) {
    return clangoffload_device_member_name(reinterpret_cast<const uint8_t *>(member_name.data()),
                                           member_name.size(), entry_id.data(), entry_id.size(), buf, cap,
                                           len);
  });
}

// ---------------------------------------------------------------------------
// OffloadBinaries

// One image and its metadata. Views borrow the parsed buffer, or the handle
// for an image of a compressed (version 3) binary.
struct offload_entry {
  std::size_t index = 0;  // over all binaries, file order
  std::size_t binary_index = 0;
  uint64_t binary_offset = 0;
  uint32_t version = 0;
  bool compressed = false;
  uint16_t image_kind = 0;    // see image_kind_name()
  uint16_t offload_kind = 0;  // see offload_kind_name()
  uint32_t flags = 0;
  clangoffload::bytes image;
  uint64_t image_offset = 0;
  uint64_t string_count = 0;
  std::string_view triple;  // empty if absent
  std::string_view arch;    // empty if absent
};

// A key-value string (of an image, or of an `--image` argument).
struct string_pair {
  std::string_view key;
  std::string_view value;  // may hold NULs (OffloadBinary versions 2, 3)
};

class offload_binaries;

// The strings of one entry of an `offload_binaries`, iterable.
class offload_strings {
 public:
  offload_strings(const offload_binaries *owner, std::size_t entry, std::size_t count) noexcept
      : owner_(owner), entry_(entry), count_(count) {}
  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  inline string_pair operator[](std::size_t i) const noexcept;
  detail::index_iterator<offload_strings> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<offload_strings> end() const noexcept { return {this, count_}; }

 private:
  const offload_binaries *owner_;
  std::size_t entry_;
  std::size_t count_;
};

// Every OffloadBinary back to back in a buffer (a raw `.offbin`, or a
// `.llvm.offloading` section's contents), and their entries. Borrows the
// buffer; compressed binaries are decompressed into the handle.
class offload_binaries {
 public:
  // `max_size` bounds decompressed sizes (`CLANGOFFLOAD_DEFAULT_LIMIT`: 1
  // GiB); `flags` may be `CLANGOFFLOAD_PARSE_LENIENT`.
  static result<offload_binaries> parse(clangoffload::bytes data, uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT,
                                        uint32_t flags = 0) {
    clangoffload_offload_binaries *raw = nullptr;
    result<void> done = detail::check([&](clangoffload_error *e) {
      return clangoffload_offload_binaries_parse(data.data(), data.size(), max_size, flags, &raw, e);
    });
    if (!done) return done.error();
    return offload_binaries(raw);
  }
  std::size_t size() const noexcept { return clangoffload_offload_binaries_entry_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  offload_entry operator[](std::size_t i) const noexcept {
    clangoffload_offload_entry raw{};
    clangoffload_offload_binaries_get_entry(h_.get(), i, &raw);
    return offload_entry{i,
                         raw.binary_index,
                         raw.binary_offset,
                         raw.version,
                         raw.compressed != 0,
                         raw.image_kind,
                         raw.offload_kind,
                         raw.flags,
                         raw.image,
                         raw.image_offset,
                         raw.string_count,
                         detail::view(raw.triple),
                         detail::view(raw.arch)};
  }
  result<offload_entry> at(std::size_t i) const {
    if (i >= size()) return ::clangoffload::error(CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
    return (*this)[i];
  }
  detail::index_iterator<offload_binaries> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<offload_binaries> end() const noexcept { return {this, size()}; }

  // String `string` (table order) of entry `entry`.
  result<string_pair> string(std::size_t entry, uint64_t string) const {
    clangoffload_string_pair raw{};
    result<void> done =
        detail::check_status(clangoffload_offload_binaries_get_string(h_.get(), entry, string, &raw));
    if (!done) return done.error();
    return string_pair{detail::view(raw.key), detail::view(raw.value)};
  }
  // Every string of entry `entry` (`entry < size()`), iterable.
  offload_strings strings(std::size_t entry) const noexcept {
    return offload_strings(this, entry, entry < size() ? static_cast<std::size_t>((*this)[entry].string_count) : 0);
  }
  // The value of the first string of entry `entry` with key `key`;
  // `CLANGOFFLOAD_STATUS_NOT_FOUND` if none.
  result<std::string_view> find_string(std::size_t entry, std::string_view key) const {
    clangoffload_bytes value{nullptr, 0};
    result<void> done = detail::check_status(clangoffload_offload_binaries_find_string(
        h_.get(), entry, reinterpret_cast<const uint8_t *>(key.data()), key.size(), &value));
    if (!done) return done.error();
    return detail::view(value);
  }
  std::optional<::clangoffload::error> fault() const {
    return detail::fault(
        [&](clangoffload_error *e) { return clangoffload_offload_binaries_fault(h_.get(), e); });
  }
  const clangoffload_offload_binaries *get() const noexcept { return h_.get(); }

 private:
  explicit offload_binaries(clangoffload_offload_binaries *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_offload_binaries, clangoffload_offload_binaries_free> h_;
};

inline string_pair offload_strings::operator[](std::size_t i) const noexcept {
  result<string_pair> pair = owner_->string(entry_, i);
  return pair ? *pair : string_pair{};
}

// An image to write; every view is borrowed for the duration of the call.
struct image_input {
  uint16_t image_kind = 0;
  uint16_t offload_kind = 0;
  uint32_t flags = 0;
  std::vector<string_pair> strings;  // written in this order
  clangoffload::bytes image;
};

// Writes images as OffloadBinaries: version 1 (one binary per image, as
// llvm-offload-binary 22), or 2/3 (one binary; version 3 may be compressed
// with `CLANGOFFLOAD_COMPRESSION_ZLIB`/`_ZSTD`).
inline result<buffer> write_offload_binaries(const std::vector<image_input> &images, uint32_t version = 1,
                                             uint32_t compression = CLANGOFFLOAD_COMPRESSION_NONE,
                                             int32_t level = CLANGOFFLOAD_DEFAULT_LEVEL) {
  std::vector<std::vector<clangoffload_string_pair>> strings;
  std::vector<clangoffload_image_input> c;
  strings.reserve(images.size());
  c.reserve(images.size());
  for (const image_input &image : images) {
    std::vector<clangoffload_string_pair> pairs;
    pairs.reserve(image.strings.size());
    for (const string_pair &p : image.strings) pairs.push_back({detail::c_bytes(p.key), detail::c_bytes(p.value)});
    strings.push_back(std::move(pairs));
    c.push_back(clangoffload_image_input{image.image_kind, image.offload_kind, image.flags, strings.back().data(),
                                         strings.back().size(), image.image.c()});
  }
  return detail::write([&](clangoffload_buffer *out, clangoffload_error *e) {
    return clangoffload_offload_binary_write(c.data(), c.size(), version, compression, level, out, e);
  });
}

// The pairs of one `--image=key=value,...` argument in LLVM 22's order.
// Borrows the argument. Iterable.
class image_arguments {
 public:
  static result<image_arguments> parse(std::string_view argument) {
    clangoffload_image_arguments *raw = nullptr;
    result<void> done = detail::check_status(clangoffload_image_arguments_parse(
        reinterpret_cast<const uint8_t *>(argument.data()), argument.size(), &raw));
    if (!done) return done.error();
    return image_arguments(raw);
  }
  std::size_t size() const noexcept { return clangoffload_image_arguments_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  string_pair operator[](std::size_t i) const noexcept {
    clangoffload_string_pair raw{};
    clangoffload_image_arguments_get(h_.get(), i, &raw);
    return string_pair{detail::view(raw.key), detail::view(raw.value)};
  }
  result<string_pair> at(std::size_t i) const {
    if (i >= size()) return ::clangoffload::error(CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
    return (*this)[i];
  }
  detail::index_iterator<image_arguments> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<image_arguments> end() const noexcept { return {this, size()}; }
  const clangoffload_image_arguments *get() const noexcept { return h_.get(); }

 private:
  explicit image_arguments(clangoffload_image_arguments *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_image_arguments, clangoffload_image_arguments_free> h_;
};

// Kind names and numbers (static strings).
inline std::string_view image_kind_name(uint16_t kind, uint32_t style = 0) noexcept {
  return clangoffload_image_kind_name(kind, style);
}
inline std::string_view offload_kind_name(uint16_t kind) noexcept { return clangoffload_offload_kind_name(kind); }
inline uint16_t image_kind_from_extension(std::string_view extension) noexcept {
  return clangoffload_image_kind_from_extension(reinterpret_cast<const uint8_t *>(extension.data()),
                                                extension.size());
}
inline uint16_t offload_kind_from_name(std::string_view name) noexcept {
  return clangoffload_offload_kind_from_name(reinterpret_cast<const uint8_t *>(name.data()), name.size());
}

// ---------------------------------------------------------------------------
// CUDA fat binaries

// One fat binary of a file; views borrow the parsed buffer.
struct cuda_fatbin {
  std::size_t index = 0;
  uint32_t source = 0;            // CLANGOFFLOAD_CUDA_SOURCE_*
  std::string_view section;       // ".nv_fatbin", "__nv_relfatbin", or empty
  uint64_t offset = 0;            // in the file
  clangoffload::bytes data;       // header included
  uint16_t version = 0;
  uint16_t header_size = 0;
  uint64_t fat_size = 0;
  std::string_view member;        // the archive member it is in, or empty
};

// One entry (or `--concat` member, `member` > 0) with every header field as
// stored; `name` (what cuobjdump extracts it to) borrows the handle, the
// other views the parsed buffer.
struct cuda_entry {
  std::size_t index = 0;
  clangoffload_cuda_entry raw{};
  std::string_view name;
  std::string_view identifier;
  clangoffload::bytes options;
  clangoffload::bytes payload;
};

// What `cuda_fatbins::select` chose: an entry index, cubin or PTX to JIT.
struct cuda_selection {
  std::size_t entry = 0;
  uint32_t match = 0;  // CLANGOFFLOAD_CUDA_MATCH_*
};

// Every CUDA fat binary of a file (raw, `.nv_fatbin` then `__nv_relfatbin`,
// OffloadBinary `fatbinary` images). Borrows the buffer. Iterable over
// entries: `for (cuda_entry e : f)`.
class cuda_fatbins {
 public:
  // `base` (the input's name without directory and extension) names the
  // images as cuobjdump does; `flags` may be `CLANGOFFLOAD_PARSE_LENIENT`.
  static result<cuda_fatbins> parse(clangoffload::bytes data, std::string_view base = {}, uint32_t flags = 0) {
    clangoffload_cuda_fatbins *raw = nullptr;
    result<void> done = detail::check([&](clangoffload_error *e) {
      return clangoffload_cuda_fatbins_parse(data.data(), data.size(), detail::c_bytes(base), flags, &raw, e);
    });
    if (!done) return done.error();
    return cuda_fatbins(raw);
  }
  std::size_t fatbin_count() const noexcept { return clangoffload_cuda_fatbins_count(h_.get()); }
  cuda_fatbin fatbin(std::size_t i) const noexcept {
    clangoffload_cuda_fatbin raw{};
    clangoffload_cuda_fatbins_get(h_.get(), i, &raw);
    clangoffload_bytes member{};
    clangoffload_cuda_fatbins_member(h_.get(), i, &member);
    return cuda_fatbin{i, raw.source, detail::view(raw.section), raw.offset, raw.data,
                       raw.version, raw.header_size, raw.fat_size, detail::view(member)};
  }
  std::size_t size() const noexcept { return clangoffload_cuda_fatbins_entry_count(h_.get()); }
  bool empty() const noexcept { return size() == 0; }
  cuda_entry operator[](std::size_t i) const noexcept {
    clangoffload_cuda_entry raw{};
    clangoffload_cuda_fatbins_get_entry(h_.get(), i, &raw);
    return cuda_entry{i, raw, detail::view(raw.name), detail::view(raw.identifier), raw.options, raw.payload};
  }
  detail::index_iterator<cuda_fatbins> begin() const noexcept { return {this, 0}; }
  detail::index_iterator<cuda_fatbins> end() const noexcept { return {this, size()}; }
  // Entry `i`'s image as cuobjdump extracts it (decoded under `max_size`).
  result<buffer> image(std::size_t i, uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT) const {
    return detail::write([&](clangoffload_buffer *out, clangoffload_error *e) {
      return clangoffload_cuda_entry_image(h_.get(), i, max_size, out, e);
    });
  }
  // The code the CUDA driver loads from fat binary `fatbin` on SM `device`.
  result<cuda_selection> select(std::size_t fatbin, uint32_t device) const {
    cuda_selection out;
    result<void> done =
        detail::check_status(clangoffload_cuda_select(h_.get(), fatbin, device, &out.entry, &out.match));
    if (!done) return done.error();
    return out;
  }
  std::optional<::clangoffload::error> fault() const {
    return detail::fault([&](clangoffload_error *e) { return clangoffload_cuda_fatbins_fault(h_.get(), e); });
  }
  const clangoffload_cuda_fatbins *get() const noexcept { return h_.get(); }

 private:
  explicit cuda_fatbins(clangoffload_cuda_fatbins *raw) noexcept : h_(raw) {}
  detail::unique_handle<clangoffload_cuda_fatbins, clangoffload_cuda_fatbins_free> h_;
};

namespace detail {
// For functions that write bytes into a caller buffer (length stored;
// BUFFER_TOO_SMALL with the length needed): `call(buf, cap, &len, err)`,
// asked for the length first.
template <class Call>
inline result<std::vector<uint8_t>> bytes_out(Call &&call) {
  std::size_t len = 0;
  clangoffload_error raw{};
  uint32_t status = static_cast<uint32_t>(call(nullptr, 0, &len, &raw));
  if (status != CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) {
    if (status == CLANGOFFLOAD_STATUS_OK) return std::vector<uint8_t>{};
    return ::clangoffload::error::from_call(status, raw);
  }
  std::vector<uint8_t> out(len);
  result<void> done = check([&](clangoffload_error *e) { return call(out.data(), out.size(), &len, e); });
  if (!done) return done.error();
  out.resize(len);
  return out;
}
}  // namespace detail

// A fat binary of `entries` as NVIDIA's `fatbinary` writes it: `mode` a
// `CLANGOFFLOAD_CUDA_COMPRESS_*`, `flags` any of `CLANGOFFLOAD_CUDA_WRITE_*`
// (0: `fatbinary -64`'s defaults).
inline result<std::vector<uint8_t>> cuda_fatbin_write(const std::vector<clangoffload_cuda_new_entry> &entries,
                                                      uint32_t mode = CLANGOFFLOAD_CUDA_COMPRESS_DEFAULT,
                                                      uint32_t flags = 0) {
  return detail::bytes_out([&](uint8_t *buf, std::size_t cap, std::size_t *len, clangoffload_error *e) {
    return clangoffload_cuda_fatbin_write(entries.data(), entries.size(), mode, flags, buf, cap, len, e);
  });
}

// The fat binaries in `data` (back to back) with only the code for `keep`,
// as `nvprune` makes them.
inline result<std::vector<uint8_t>> cuda_fatbin_prune(clangoffload::bytes data,
                                                      const std::vector<clangoffload_cuda_target> &keep,
                                                      uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT) {
  return detail::bytes_out([&](uint8_t *buf, std::size_t cap, std::size_t *len, clangoffload_error *e) {
    return clangoffload_cuda_fatbin_prune(data.data(), data.size(), keep.data(), keep.size(), max_size, buf, cap,
                                          len, e);
  });
}

// Prunes the fat binaries of a file (raw, or a host's `.nv_fatbin` and
// `__nv_relfatbin`) in place; returns how many changed.
inline result<std::size_t> cuda_fatbin_prune_in_place(std::vector<uint8_t> &file,
                                                      const std::vector<clangoffload_cuda_target> &keep,
                                                      uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT) {
  std::size_t changed = 0;
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_cuda_fatbin_prune_in_place(file.data(), file.size(), keep.data(), keep.size(), max_size,
                                                   &changed, e);
  });
  if (!done) return done.error();
  return changed;
}

// ---------------------------------------------------------------------------
// Compressed bundles (CCOB)

struct compressed_header {
  uint16_t version = 0;
  uint16_t method = 0;  // CLANGOFFLOAD_METHOD_*, or another value as stored
  uint32_t header_len = 0;
  bool has_total_size = false;
  uint64_t total_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t hash = 0;
  clangoffload::bytes container;   // header + compressed bytes
  clangoffload::bytes compressed;  // after the header
};

// Reads the header only; the views borrow `data`.
inline result<compressed_header> parse_compressed_header(clangoffload::bytes data) {
  clangoffload_compressed_header raw{};
  result<void> done = detail::check(
      [&](clangoffload_error *e) { return clangoffload_compressed_parse(data.data(), data.size(), &raw, e); });
  if (!done) return done.error();
  return compressed_header{raw.version,    raw.method, raw.header_len, raw.has_total_size, raw.total_size,
                           raw.uncompressed_size, raw.hash, raw.container, raw.compressed};
}

// Every check that needs no decoding, and the size `data` decompresses to.
// `max_size`: a limit in bytes, or `CLANGOFFLOAD_DEFAULT_LIMIT` (1 GiB).
inline result<std::size_t> decompressed_size(clangoffload::bytes data,
                                             uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT) {
  std::size_t size = 0;
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_compressed_decompressed_size(data.data(), data.size(), max_size, &size, e);
  });
  if (!done) return done.error();
  return size;
}

// Decompresses into the caller's `out` (`capacity` bytes; `decompressed_size`
// says how many are needed) and returns the size written. `flags` may be
// `CLANGOFFLOAD_SKIP_HASH_CHECK`. On an error `out` may hold partial output.
inline result<std::size_t> decompress_into(clangoffload::bytes data, uint8_t *out, std::size_t capacity,
                                           uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT, uint32_t flags = 0) {
  std::size_t written = 0;
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_compressed_decompress(data.data(), data.size(), max_size, flags, out, capacity, &written,
                                              e);
  });
  if (!done) return done.error();
  return written;
}

// Decompresses into a new vector: the size is checked against `max_size`
// before anything is allocated.
inline result<std::vector<uint8_t>> decompress(clangoffload::bytes data,
                                               uint64_t max_size = CLANGOFFLOAD_DEFAULT_LIMIT,
                                               uint32_t flags = 0) {
  result<std::size_t> size = decompressed_size(data, max_size);
  if (!size) return size.error();
  std::vector<uint8_t> out(*size);
  result<std::size_t> written = decompress_into(data, out.data(), out.size(), max_size, flags);
  if (!written) return written.error();
  out.resize(*written);
  return out;
}

// Compresses an uncompressed bundle into a CCOB (header version 2 or 3,
// `CLANGOFFLOAD_METHOD_ZSTD` or `_ZLIB`).
inline result<std::vector<uint8_t>> compress(clangoffload::bytes data, uint16_t version = 3,
                                             uint16_t method = CLANGOFFLOAD_METHOD_ZSTD,
                                             int32_t level = CLANGOFFLOAD_DEFAULT_LEVEL) {
  std::size_t bound = 0;
  result<void> done = detail::check_status(clangoffload_compress_bound(data.size(), &bound));
  if (!done) return done.error();
  std::vector<uint8_t> out(bound);
  std::size_t written = 0;
  done = detail::check([&](clangoffload_error *e) {
    return clangoffload_compress(data.data(), data.size(), version, method, level, out.data(), out.size(),
                                 &written, e);
  });
  if (!done) return done.error();
  out.resize(written);
  return out;
}

// The first 8 bytes of the MD5 of `data`, little-endian (the CCOB hash).
inline result<uint64_t> truncated_md5(clangoffload::bytes data) {
  uint64_t hash = 0;
  result<void> done = detail::check_status(clangoffload_truncated_md5(data.data(), data.size(), &hash));
  if (!done) return done.error();
  return hash;
}

// ---------------------------------------------------------------------------
// Finding containers

// A name for a container kind: "bundle", "compressed", "offload_binary",
// "cuda_fatbin" (found by a scan only) ("unknown" otherwise), as
// `clangoffload inspect --json` and the Python package name them.
inline std::string_view container_kind_name(uint32_t kind) noexcept {
  switch (kind) {
    case CLANGOFFLOAD_CONTAINER_KIND_BUNDLE:
      return "bundle";
    case CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED:
      return "compressed";
    case CLANGOFFLOAD_CONTAINER_KIND_OFFLOAD_BINARY:
      return "offload_binary";
    case CLANGOFFLOAD_CONTAINER_KIND_CUDA_FATBIN:
      return "cuda_fatbin";
    default:
      return "unknown";
  }
}

// One container of a sequence (`containers`); `data` borrows the buffer.
struct container {
  clangoffload_container_kind kind = CLANGOFFLOAD_CONTAINER_KIND_BUNDLE;
  uint64_t offset = 0;
  clangoffload::bytes data;  // from its magic to its end
};

namespace detail {
struct containers_walk {
  clangoffload::bytes data;
  uint64_t cursor = 0;
  std::optional<::clangoffload::error> error;
  bool next(container &item) {
    if (error) return false;
    clangoffload_container raw{};
    clangoffload_error e{};
    uint32_t status = static_cast<uint32_t>(clangoffload_containers_next(data.data(), data.size(), &cursor, &raw, &e));
    if (status == CLANGOFFLOAD_STATUS_END) return false;
    if (status != CLANGOFFLOAD_STATUS_OK) {
      error = ::clangoffload::error::from_call(status, e);
      return false;
    }
    item = container{raw.kind, raw.offset, raw.data};
    return true;
  }
};
}  // namespace detail

// The containers laid back to back in `data` (a linked `.hip_fatbin`:
// bundles, compressed bundles, OffloadBinaries, zero padding between them),
// delimited by their own sizes. Single-pass; after the loop, `error()` holds
// the located error that ended the walk early, if any.
using container_range = detail::cursor_range<detail::containers_walk, container>;
inline container_range containers(clangoffload::bytes data) {
  return container_range(detail::containers_walk{data, 0, std::nullopt});
}

// What `scan` found.
struct scan_hit {
  clangoffload_container_kind kind = CLANGOFFLOAD_CONTAINER_KIND_BUNDLE;
  uint32_t status = 0;  // CLANGOFFLOAD_STATUS_OK, or why a magic starts none
  uint64_t offset = 0;  // of the magic in the buffer
  clangoffload::bytes data;  // the container cut to its extent (empty when rejected)
  bool valid() const noexcept { return status == CLANGOFFLOAD_STATUS_OK; }
};

namespace detail {
struct scan_walk {
  clangoffload::bytes data;
  uint32_t flags = 0;
  clangoffload_scan_cursor cursor{};
  std::optional<::clangoffload::error> error;
  bool next(scan_hit &item) {
    if (error) return false;
    clangoffload_scan_hit raw{};
    uint32_t status =
        static_cast<uint32_t>(clangoffload_scan_cursor_next(data.data(), data.size(), flags, &cursor, &raw));
    if (status == CLANGOFFLOAD_STATUS_END) return false;
    if (status != CLANGOFFLOAD_STATUS_OK) {
      error = ::clangoffload::error(status);
      return false;
    }
    item = scan_hit{raw.kind, raw.status, raw.offset, raw.data};
    return true;
  }
};
}  // namespace detail

// Every bundle, compressed bundle and OffloadBinary anywhere in `data` (an
// in-memory image, a host object, an archive, a core dump), validated, in
// offset order; with `CLANGOFFLOAD_SCAN_REJECTED`, magics that start no valid
// container too (`!hit.valid()`). Single-pass.
using scan_range = detail::cursor_range<detail::scan_walk, scan_hit>;
inline scan_range scan(clangoffload::bytes data, uint32_t flags = 0) {
  return scan_range(detail::scan_walk{data, flags, {}, std::nullopt});
}

// The extent of the container at `data`, reading its header a few bytes at
// a time and never more than `max` bytes (for an image known by pointer).
inline result<uint64_t> container_extent(const void *data, std::size_t max) {
  uint64_t extent = 0;
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_container_extent(static_cast<const uint8_t *>(data), max, &extent, e);
  });
  if (!done) return done.error();
  return extent;
}

// An ELF section holding offload data; views borrow the file's buffer.
struct offload_section {
  clangoffload_section_kind kind = CLANGOFFLOAD_SECTION_KIND_OFFLOAD_BINARIES;
  uint32_t section_index = 0;
  std::string_view name;
  clangoffload::bytes data;
  uint64_t offset = 0;  // of the contents in the file
};

namespace detail {
struct elf_walk {
  clangoffload::bytes data;
  uint32_t index = 0;
  bool stopped = false;
  std::optional<::clangoffload::error> error;
  bool next(offload_section &item) {
    while (!stopped) {
      clangoffload_offload_section raw{};
      clangoffload_error e{};
      uint32_t before = index;
      uint32_t status =
          static_cast<uint32_t>(clangoffload_elf_offload_section_next(data.data(), data.size(), &index, &raw, &e));
      if (status == CLANGOFFLOAD_STATUS_OK) {
        item = offload_section{raw.kind, raw.section_index, view(raw.name), raw.data, raw.offset};
        return true;
      }
      if (status == CLANGOFFLOAD_STATUS_END) break;
      if (!error) error = ::clangoffload::error::from_call(status, e);
      // A damaged section moves the index past it: go on with the next. An
      // error about the whole file (not ELF...) leaves it: stop.
      if (index == before) break;
    }
    stopped = true;
    return false;
  }
};
}  // namespace detail

// The sections of the ELF file `data` that hold offload data, in section
// order. Damaged section headers are skipped (the first error is kept in
// `error()`); an error about the file as a whole ends the walk.
using elf_section_range = detail::cursor_range<detail::elf_walk, offload_section>;
inline elf_section_range elf_offload_sections(clangoffload::bytes data) {
  return elf_section_range(detail::elf_walk{data, 0, false, std::nullopt});
}

// A HIP/CUDA fat-binary wrapper record and the fat binary it points at.
struct fatbin_wrapper_record {
  uint32_t magic = 0;
  uint32_t version = 0;
  uint64_t binary_address = 0;
  bool resolved = false;  // the fields below are set
  uint32_t target_section = 0;
  uint64_t target_offset = 0;
  clangoffload::bytes target;
};

namespace detail {
inline fatbin_wrapper_record record(const clangoffload_fatbin_wrapper_record &raw) noexcept {
  return fatbin_wrapper_record{raw.magic,          raw.version,       raw.binary_address, raw.resolved != 0,
                               raw.target_section, raw.target_offset, raw.target};
}
}  // namespace detail

// Record `record` of wrapper section `section_index` of the ELF file `data`.
inline result<fatbin_wrapper_record> fatbin_wrapper(clangoffload::bytes data, uint32_t section_index,
                                                    std::size_t record) {
  clangoffload_fatbin_wrapper_record raw{};
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_fatbin_wrapper_get(data.data(), data.size(), section_index, record, &raw, e);
  });
  if (!done) return done.error();
  return detail::record(raw);
}

// Every record of wrapper section `section_index` (relocations read once).
inline result<std::vector<fatbin_wrapper_record>> fatbin_wrappers(clangoffload::bytes data,
                                                                  uint32_t section_index) {
  std::size_t count = 0;
  result<void> done = detail::check([&](clangoffload_error *e) {
    return clangoffload_fatbin_wrappers(data.data(), data.size(), section_index, nullptr, 0, &count, e);
  });
  std::vector<clangoffload_fatbin_wrapper_record> raw;
  if (!done && done.status() == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) {
    raw.resize(count);
    done = detail::check([&](clangoffload_error *e) {
      return clangoffload_fatbin_wrappers(data.data(), data.size(), section_index, raw.data(), raw.size(), &count,
                                          e);
    });
  }
  if (!done) return done.error();
  std::vector<fatbin_wrapper_record> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count && i < raw.size(); ++i) out.push_back(detail::record(raw[i]));
  return out;
}

// Checks a wrapper record as `__hipRegisterFatBinary` receives it; returns
// its magic.
inline result<uint32_t> fatbin_wrapper_check(const clangoffload_fatbin_wrapper *wrapper) {
  uint32_t magic = 0;
  result<void> done = detail::check_status(clangoffload_fatbin_wrapper_check(wrapper, &magic));
  if (!done) return done.error();
  return magic;
}

// The `__tgt_device_image` records for the images of every OffloadBinary in
// `data` (pointing into `data`: keep it alive while they are registered).
struct device_images {
  std::vector<__tgt_device_image> images;
  std::size_t skipped_compressed = 0;  // compressed binaries left out
};
inline result<device_images> fill_device_images(clangoffload::bytes data,
                                                __tgt_offload_entry *entries_begin = nullptr,
                                                __tgt_offload_entry *entries_end = nullptr) {
  device_images out;
  std::size_t count = 0;
  uint32_t status = clangoffload_device_images_fill(data.data(), data.size(), entries_begin, entries_end, nullptr,
                                                    0, &count, &out.skipped_compressed);
  if (status == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) {
    out.images.resize(count);
    status = clangoffload_device_images_fill(data.data(), data.size(), entries_begin, entries_end,
                                             out.images.data(), out.images.size(), &count,
                                             &out.skipped_compressed);
  }
  if (status != CLANGOFFLOAD_STATUS_OK) return error(status);
  out.images.resize(count);
  return out;
}

// The target ID an AMDGPU code object was built for, from its `e_flags`
// (`gfx90a:sramecc+:xnack-`); `CLANGOFFLOAD_STATUS_NOT_FOUND` for other files.
inline result<std::string> amdgpu_target_id(clangoffload::bytes code_object) {
  return detail::text([&](char *buf, std::size_t cap, std::size_t *len) {
    return clangoffload_amdgpu_target_id(code_object.data(), code_object.size(), buf, cap, len, nullptr);
  });
}

// ---------------------------------------------------------------------------
// Bundle entry IDs and AMDGPU target IDs

// `<kind>-<arch>-<vendor>-<os>-<env>[-<target-id>]`; views borrow the text.
struct entry_id {
  std::string_view kind, arch, vendor, os, env, target_id;
  bool known_kind = false;
  bool known_arch = false;
};

inline result<entry_id> parse_entry_id(std::string_view text) {
  clangoffload_entry_id raw{};
  result<void> done = detail::check_status(clangoffload_entry_id_parse(text.data(), text.size(), &raw));
  if (!done) return done.error();
  return entry_id{detail::view(raw.kind), detail::view(raw.arch),   detail::view(raw.vendor),
                  detail::view(raw.os),   detail::view(raw.env),    detail::view(raw.target_id),
                  raw.known_kind,         raw.known_arch};
}

// The ID clang-offload-bundler 22 stores for the `-targets` entry `text`.
inline result<std::string> normalize_entry_id(std::string_view text) {
  return detail::text([&](char *buf, std::size_t cap, std::size_t *len) {
    return clangoffload_entry_id_normalize(text.data(), text.size(), buf, cap, len);
  });
}

// Whether a code object stored as `code_object` may serve a request for
// `requested` (both entry IDs); `flags` may be
// `CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE`.
inline result<bool> entry_id_is_compatible(std::string_view code_object, std::string_view requested,
                                           uint32_t flags = 0) {
  bool ok = false;
  result<void> done = detail::check_status(clangoffload_entry_id_is_compatible(
      code_object.data(), code_object.size(), requested.data(), requested.size(), flags, &ok));
  if (!done) return done.error();
  return ok;
}

// The first pair of `ids` that cannot be bundled together (indices, the
// lower-sorting ID first), or `std::nullopt` if there is none.
inline result<std::optional<std::pair<std::size_t, std::size_t>>> find_conflicting_entry_ids(
    const std::vector<std::string_view> &ids) {
  std::vector<clangoffload_bytes> c;
  c.reserve(ids.size());
  for (std::string_view id : ids) c.push_back(detail::c_bytes(id));
  std::size_t first = 0, second = 0;
  uint32_t status = clangoffload_entry_ids_find_conflict(c.data(), c.size(), &first, &second);
  if (status == CLANGOFFLOAD_STATUS_NOT_FOUND) return std::optional<std::pair<std::size_t, std::size_t>>();
  if (status != CLANGOFFLOAD_STATUS_OK) return error(status);
  return std::optional<std::pair<std::size_t, std::size_t>>(std::make_pair(first, second));
}

// A parsed AMDGPU target ID.
struct target_id {
  std::string_view processor;  // canonical (static storage)
  clangoffload_feature xnack = CLANGOFFLOAD_FEATURE_ANY;
  clangoffload_feature sramecc = CLANGOFFLOAD_FEATURE_ANY;
};

inline result<target_id> parse_target_id(std::string_view text) {
  clangoffload_target_id raw{};
  result<void> done = detail::check_status(clangoffload_target_id_parse(text.data(), text.size(), &raw));
  if (!done) return done.error();
  return target_id{detail::view(raw.processor), raw.xnack, raw.sramecc};
}

// `gfx90a:xnack-:sramecc+` -> `gfx90a:sramecc+:xnack-`.
inline result<std::string> canonicalize_target_id(std::string_view text) {
  return detail::text([&](char *buf, std::size_t cap, std::size_t *len) {
    return clangoffload_target_id_canonicalize(text.data(), text.size(), buf, cap, len);
  });
}

// Whether code built for target ID `code_object` may run where `requested`
// is asked for.
inline result<bool> target_id_is_compatible(std::string_view code_object, std::string_view requested) {
  bool ok = false;
  result<void> done = detail::check_status(clangoffload_target_id_is_compatible(
      code_object.data(), code_object.size(), requested.data(), requested.size(), &ok));
  if (!done) return done.error();
  return ok;
}

}  // namespace clangoffload

#endif  // CLANGOFFLOAD_HPP
