use super::*;

#[test]
fn kinds_round_trip_their_raw_values() {
    for raw in 0..10u16 {
        assert_eq!(ImageKind::from_raw(raw).raw(), raw);
    }
    for raw in [0u16, 1, 2, 4, 8, 3, 16, 0xffff] {
        assert_eq!(OffloadKind::from_raw(raw).raw(), raw);
    }
    assert_eq!(ImageKind::from_extension(b"spv"), ImageKind::None);
    assert_eq!(OffloadKind::from_name(b"sycl"), OffloadKind::Sycl);
}
