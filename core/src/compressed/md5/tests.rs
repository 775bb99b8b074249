use super::Hasher;
use alloc::vec::Vec;

fn truncated(pieces: &[&[u8]]) -> u64 {
    let mut hasher = Hasher::new();
    for piece in pieces {
        hasher.consume(piece);
    }
    hasher.truncated()
}

fn reference(data: &[u8]) -> u64 {
    let digest = md5::compute(data).0;
    u64::from_le_bytes(digest[..8].try_into().unwrap())
}

#[test]
fn rfc_1321_test_suite() {
    // RFC 1321, appendix A.5, as printed there.
    let suite: [(&[u8], &str); 7] = [
        (b"", "d41d8cd98f00b204e9800998ecf8427e"),
        (b"a", "0cc175b9c0f1b6a831c399e269772661"),
        (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
        (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        (
            b"abcdefghijklmnopqrstuvwxyz",
            "c3fcd3d76192e4007dfb496cca67e13b",
        ),
        (
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "d174ab98d277d9f5a5611c2c9f419d9f",
        ),
        (
            b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a",
        ),
    ];
    for (input, digest) in suite {
        let first8: Vec<u8> = (0..8)
            .map(|i| u8::from_str_radix(&digest[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let expected = u64::from_le_bytes(first8.try_into().unwrap());
        assert_eq!(truncated(&[input]), expected, "{input:?}");
    }
}

/// Messages hashed side by side, in steps of every kind (whole blocks,
/// parts of blocks, nothing, lanes that end early; what the lanes do
/// not have in common hashed alone), give each message's own MD5, for
/// every number of lanes up to more than a vector holds.
/// With every instruction set this processor has.
#[cfg(feature = "zstd")]
#[test]
fn messages_hashed_together_hash_as_each_alone() {
    for isa in super::lanes::Isa::all() {
        hashed_together_hash_as_each_alone(isa);
    }
}

/// A compiler with AVX-512's intrinsics and a processor with AVX-512VL
/// use them: the test above then covers both.
#[cfg(all(feature = "zstd", target_arch = "x86_64"))]
#[test]
fn avx512_is_used_where_the_processor_has_it() {
    let has = std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl");
    let lanes = super::lanes::Isa::all().len();
    match (cfg!(clangoffload_avx512), has) {
        (true, true) => assert_eq!(lanes, 2),
        _ => assert_eq!(lanes, 1),
    }
    assert!(matches!(super::lanes::Isa::best(), super::lanes::Isa::Baseline) == (lanes == 1));
}

#[cfg(feature = "zstd")]
fn hashed_together_hash_as_each_alone(isa: super::lanes::Isa) {
    let data: Vec<u8> = (0..40_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for lanes in 1..=super::WIDEST * 2 + 1 {
        // Lane i hashes data[i * 101..][..len_i], fed in steps that
        // differ per lane and per round.
        let lens: Vec<usize> = (0..lanes).map(|i| 9_000 + i * 1_237 % 5_000).collect();
        let mut hashers: Vec<Hasher> = (0..lanes).map(|_| Hasher::new()).collect();
        let mut fed = alloc::vec![0usize; lanes];
        for round in 0.. {
            let steps: Vec<usize> = (0..lanes)
                .map(|i| match (round + i) % 5 {
                    0 => 4096,
                    1 => 640,
                    2 => 0,
                    3 => 77,
                    _ => 1_000,
                })
                .collect();
            let mut pairs: Vec<(&mut Hasher, &[u8])> = hashers
                .iter_mut()
                .enumerate()
                .map(|(i, h)| {
                    let message = &data[i * 101..][..lens[i]];
                    let take = steps[i].min(lens[i] - fed[i]);
                    let piece = &message[fed[i]..fed[i] + take];
                    fed[i] += take;
                    (h, piece)
                })
                .collect();
            let common = super::consume_blocks_with(isa, &mut pairs);
            for (hasher, piece) in pairs {
                hasher.consume(&piece[common..]);
            }
            if fed.iter().zip(&lens).all(|(f, l)| f == l) {
                break;
            }
        }
        for (i, hasher) in hashers.into_iter().enumerate() {
            let message = &data[i * 101..][..lens[i]];
            assert_eq!(
                hasher.truncated(),
                reference(message),
                "{isa:?}: {lanes} lanes, lane {i}"
            );
        }
    }
}

/// `truncated_md5s` gives each message's own hash, for every count of
/// messages and unequal lengths.
#[cfg(feature = "zstd")]
#[test]
fn messages_hashed_side_by_side_hash_as_each_alone() {
    let data: Vec<u8> = (0..50_000u32)
        .map(|i| (i.wrapping_mul(40_503) >> 5) as u8)
        .collect();
    for count in 0..7 {
        let messages: Vec<&[u8]> = (0..count)
            .map(|i| &data[i * 77..i * 77 + 9_000 + i * 3_001])
            .collect();
        let side_by_side = crate::compressed::truncated_md5s(&messages);
        let alone: Vec<u64> = messages.iter().map(|m| reference(m)).collect();
        assert_eq!(side_by_side, alone, "{count} messages");
    }
}

#[test]
fn every_length_and_every_split_hashes_as_the_md5_crate_does() {
    let data: Vec<u8> = (0..600u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    for len in 0..data.len() {
        let input = &data[..len];
        let whole = reference(input);
        assert_eq!(truncated(&[input]), whole, "length {len}");
        for cut in [1, 55, 56, 63, 64, 65, 127, 128, 200] {
            let (head, tail) = input.split_at(cut.min(len));
            let (mid, tail) = tail.split_at((cut / 3).min(tail.len()));
            assert_eq!(
                truncated(&[head, mid, tail]),
                whole,
                "length {len}, cut {cut}"
            );
        }
    }
}
