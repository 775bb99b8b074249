//! The C ABI of clangoffload. Every exported function is a thin, panic-safe
//! shell over the core crate: it checks its pointers, calls the core, and turns
//! the result into a status code and out-parameters.
//!
//! Conventions (also in `include/clangoffload.h`): statuses are returned as
//! [`clangoffload_status`]; out-parameters are written only on success; views
//! borrow the caller's buffer.
//!
//! Without the `std` feature this is the embedded build (`make embedded`):
//! `no_std`, built with `panic = "abort"`, and with `alloc` the handles and
//! writers allocate through the `embedded` module's hooks. Without `alloc`
//! only the functions that need no allocator exist (README.md lists them).
#![cfg_attr(not(feature = "std"), no_std)]
#![allow(non_camel_case_types)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[macro_use]
mod ffi;
#[cfg(feature = "alloc")]
pub mod archive;
pub mod bundle;
#[cfg(feature = "alloc")]
pub mod bundler;
pub mod compressed;
#[cfg(feature = "alloc")]
pub mod coverage;
#[cfg(feature = "alloc")]
pub mod cuda_fatbin;
#[cfg(not(feature = "std"))]
pub mod embedded;
#[cfg(feature = "alloc")]
mod handle;
pub mod id;
#[cfg(feature = "alloc")]
pub mod inspect;
#[cfg(feature = "alloc")]
pub mod kpack;
#[cfg(feature = "alloc")]
pub mod kpack_split;
pub mod locate;
#[cfg(feature = "alloc")]
pub mod object_bundle;
#[cfg(feature = "alloc")]
pub mod offload_binary;
#[cfg(feature = "alloc")]
pub mod packager;
#[cfg(feature = "alloc")]
pub mod registration;
#[cfg(feature = "alloc")]
pub mod select;
#[cfg(feature = "alloc")]
pub mod select_kpack;
#[cfg(feature = "alloc")]
pub mod sparse;
pub mod status;
#[cfg(feature = "alloc")]
pub mod text_bundle;
pub mod wrapper;

#[cfg(feature = "alloc")]
pub use archive::*;
pub use bundle::*;
#[cfg(feature = "alloc")]
pub use bundler::*;
pub use compressed::*;
#[cfg(feature = "alloc")]
pub use coverage::*;
#[cfg(feature = "alloc")]
pub use cuda_fatbin::*;
pub use ffi::clangoffload_bytes;
#[cfg(feature = "alloc")]
pub use handle::CLANGOFFLOAD_PARSE_LENIENT;
pub use id::*;
#[cfg(feature = "alloc")]
pub use inspect::*;
#[cfg(feature = "alloc")]
pub use kpack::*;
#[cfg(feature = "alloc")]
pub use kpack_split::*;
pub use locate::*;
#[cfg(feature = "alloc")]
pub use object_bundle::*;
#[cfg(feature = "alloc")]
pub use offload_binary::*;
#[cfg(feature = "alloc")]
pub use packager::*;
#[cfg(feature = "alloc")]
pub use registration::*;
#[cfg(feature = "alloc")]
pub use select::*;
#[cfg(feature = "alloc")]
pub use select_kpack::*;
#[cfg(feature = "alloc")]
pub use sparse::*;
pub use status::*;
#[cfg(feature = "alloc")]
pub use text_bundle::*;
pub use wrapper::*;

/// Major version of the library; agrees with `clangoffload_version()`.
pub const CLANGOFFLOAD_VERSION_MAJOR: u32 = 0;
/// Minor version of the library.
pub const CLANGOFFLOAD_VERSION_MINOR: u32 = 1;
/// Patch version of the library.
pub const CLANGOFFLOAD_VERSION_PATCH: u32 = 0;

/// The library version as a NUL-terminated string, e.g. `"0.1.0"`; its numbers
/// equal `CLANGOFFLOAD_VERSION_MAJOR`, `_MINOR` and `_PATCH`.
///
/// Ownership: returns static storage; never free it.
///
/// Lifetime: the string lives as long as the library is loaded.
///
/// NULL: never returns NULL. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_version() -> *const core::ffi::c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_constants_agree_with_the_package() {
        let v = format!(
            "{}.{}.{}",
            super::CLANGOFFLOAD_VERSION_MAJOR,
            super::CLANGOFFLOAD_VERSION_MINOR,
            super::CLANGOFFLOAD_VERSION_PATCH
        );
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
        // SAFETY: `clangoffload_version` returns a static NUL-terminated
        // string.
        let s = unsafe { std::ffi::CStr::from_ptr(super::clangoffload_version()) };
        assert_eq!(s.to_str().unwrap(), v);
    }
}
