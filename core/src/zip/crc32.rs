//! CRC-32 (IEEE 802.3, reflected, as ZIP stores it), eight bytes a step
//! ("slicing by 8": eight tables, one per byte position), so that checking
//! a member costs a fraction of inflating it.

/// The eight tables: `TABLES[0]` the byte-at-a-time table, `TABLES[k]` a
/// byte's contribution k positions earlier. Evaluated at compile time.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const TABLES: [[u32; 256]; 8] = {
    let mut tables = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        // In range: i < 256.
        #[allow(clippy::as_conversions)]
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        tables[0][i] = c;
        i += 1;
    }
    let mut t = 1;
    while t < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[t - 1][i];
            // In range: a byte.
            #[allow(clippy::as_conversions)]
            let low = (prev & 0xff) as usize;
            tables[t][i] = (prev >> 8) ^ tables[0][low];
            i += 1;
        }
        t += 1;
    }
    tables
};

/// `TABLES[table]`'s entry for `byte`.
fn entry(table: usize, byte: u8) -> u32 {
    TABLES
        .get(table)
        .and_then(|t| t.get(usize::from(byte)))
        .copied()
        .unwrap_or(0)
}

/// A CRC-32 computed piece by piece.
pub(super) struct Crc32(u32);

impl Crc32 {
    pub(super) fn new() -> Self {
        Crc32(!0)
    }

    pub(super) fn update(&mut self, bytes: &[u8]) {
        let mut c = self.0;
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(word);
            let x = c.to_le_bytes();
            c = entry(7, b[0] ^ x[0])
                ^ entry(6, b[1] ^ x[1])
                ^ entry(5, b[2] ^ x[2])
                ^ entry(4, b[3] ^ x[3])
                ^ entry(3, b[4])
                ^ entry(2, b[5])
                ^ entry(1, b[6])
                ^ entry(0, b[7]);
        }
        for &byte in words.remainder() {
            c = entry(0, c.to_le_bytes()[0] ^ byte) ^ (c >> 8);
        }
        self.0 = c;
    }

    pub(super) fn value(&self) -> u32 {
        !self.0
    }
}

/// The CRC-32 of `bytes`.
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = Crc32::new();
    crc.update(bytes);
    crc.value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_ieees() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        // Piece by piece, at every split, as in one go.
        let text = b"The quick brown fox jumps over the lazy dog, twice over.";
        for split in 0..text.len() {
            let mut crc = Crc32::new();
            crc.update(&text[..split]);
            crc.update(&text[split..]);
            assert_eq!(crc.value(), crc32(text), "{split}");
        }
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }
}
