//! The code object the HIP runtime loads on a device from one fat binary of
//! any kind (a bundle, a compressed bundle, an OffloadBinary), without
//! `alloc`: what an embedded loader asks. It sits above the containers and
//! [`crate::id`]'s rules, which know nothing of each other.

#[cfg(feature = "alloc")]
use crate::id::select_in_compressed;
use crate::id::{select_for_device, select_image, DeviceMatch, Loadable, TargetId};
use crate::Bundle;

/// The code object the HIP runtime loads on `device` from `data`, whatever
/// the container: a bundle ([`select_for_device`]), a compressed bundle, or
/// an OffloadBinary (an `amdgcn-amd-amdhsa` image, or `amdgpu<subarch>-amd-amdhsa`
/// as for a bundle, of exactly the device's target ID, else the first
/// compatible one). `Ok(None)` if nothing fits.
///
/// A compressed bundle's code goes into `scratch`. With the `alloc` feature
/// only the chosen entry is decoded ([`select_in_compressed`]): its code
/// object at the start of `scratch`, its ID right after it, so `scratch`
/// must hold [`ChosenEntry::needed`](crate::id::ChosenEntry::needed) bytes; the hash is checked (the rest
/// of the bundle streamed through MD5) only if `options.verify_hash` asks.
/// Without `alloc` the whole bundle is decoded into `scratch`, which must
/// hold its declared size ([`crate::CompressedBundle::check`]), with the
/// hash checked as `options` says; the code and ID lie where the bundle has
/// them. Either way a `scratch` too small is
/// [`OutputTooSmall`](crate::ErrorKind::OutputTooSmall) with the size
/// needed.
pub fn select_in_fatbin<'a>(
    data: &'a [u8],
    device: &TargetId<'_>,
    scratch: &'a mut [u8],
    options: &crate::DecompressOptions,
) -> crate::Result<Option<Loadable<'a>>> {
    let bundle_pick = |bundle: Bundle<'a>| {
        select_for_device(&bundle, device).map(|(how, entry)| Loadable {
            how,
            code: entry.payload(),
            id: entry.id(),
            offset: entry.offset(),
        })
    };
    if crate::CompressedBundle::is_compressed(data) {
        let compressed = crate::CompressedBundle::parse(data)?;
        #[cfg(feature = "alloc")]
        return match select_in_compressed(&compressed, device, options)? {
            Some(chosen) => chosen.decompress_into(scratch, options).map(Some),
            None => Ok(None),
        };
        #[cfg(not(feature = "alloc"))]
        {
            let size = compressed.decompress_into(scratch, options)?;
            let bundle = Bundle::parse(scratch.get(..size).unwrap_or_default())?;
            return Ok(bundle_pick(bundle));
        }
    }
    if crate::OffloadBinary::is_offload_binary(data) {
        let binary = crate::OffloadBinary::parse(data)?;
        let images = binary
            .entries()
            .map(|e| (e.triple().unwrap_or_default(), e.arch().unwrap_or_default()));
        let pick = select_image(images, device).and_then(|i| binary.entries().nth(i));
        return Ok(pick.map(|entry| Loadable {
            how: DeviceMatch::Native,
            code: entry.image(),
            id: entry.arch().unwrap_or_default(),
            offset: entry.image_offset(),
        }));
    }
    Ok(bundle_pick(Bundle::parse(data)?))
}
