//! Whole chunks of the per-body and per-joint datasets, filtered here and handed to the
//! library as they will be stored (`H5Dwrite_chunk`), so that their compression runs on
//! every core.
//!
//! The library applies a dataset's filters on the thread that writes, one chunk after
//! another, and deflate was 68 % of an export's time (perf, a 620 MB chain log: 2.9 s). A
//! full block of frames is instead cut into its chunks, each chunk shuffled and deflated as
//! the dataset's own filters would (HDF5's shuffle: byte `b` of element `e` goes to
//! `b * n + e`; deflate: a zlib stream, level [`super::DEFLATE_LEVEL`]) on the `rayon` pool,
//! and the compressed chunks are written in order. The file is still laid out by the
//! reference library (it places the chunks, indexes them and writes every other byte); any
//! reader inflates them with its own deflate. The chunks' bytes do not depend on the thread
//! count, and they are written in the same order, so the file is the same whatever it is.

use flate2::write::ZlibEncoder;
use flate2::Compression;
use hdf5::Dataset;
use rayon::prelude::*;
use std::io::Write;

/// A value stored in a filtered chunk: its bytes as the dataset's file type holds them (the
/// native type the dataset was created with, so native byte order).
pub(super) trait ChunkValue: Copy + Send + Sync {
    const SIZE: usize;
    /// Writes this value's bytes, byte `b` to `out[b * stride]`.
    fn scatter_bytes(self, out: &mut [u8], stride: usize);
}

macro_rules! chunk_value {
    ($($t:ty),*) => {$(
        impl ChunkValue for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn scatter_bytes(self, out: &mut [u8], stride: usize) {
                for (b, byte) in self.to_ne_bytes().into_iter().enumerate() {
                    out[b * stride] = byte;
                }
            }
        }
    )*};
}
chunk_value!(f32, f64, u64, i64, u8);

/// The shape of a `(frames, width, inner)` dataset's chunks: `frames` frames by `items`
/// bodies or joints by all `inner` values.
#[derive(Clone, Copy, Debug)]
pub(super) struct ChunkShape {
    pub frames: usize,
    pub items: usize,
    pub inner: usize,
}

/// One chunk of `block` (whole frames, at most `shape.frames`, of `width` items of
/// `shape.inner` values), the items from `first_item`: laid out in C order over the full
/// chunk (items past `width` and frames past the block's are zeros, as the library pads
/// an edge chunk), shuffled, then deflated.
pub(super) fn encode_chunk<T: ChunkValue>(
    block: &[T],
    width: usize,
    shape: ChunkShape,
    first_item: usize,
    level: u8,
) -> std::io::Result<Vec<u8>> {
    let n = shape.frames * shape.items * shape.inner;
    let present = shape.items.min(width - first_item) * shape.inner;
    let frames = block.len() / (width * shape.inner);
    let mut shuffled = vec![0u8; n * T::SIZE];
    for frame in 0..frames {
        let from = (frame * width + first_item) * shape.inner;
        let at = frame * shape.items * shape.inner;
        for (k, &v) in block[from..from + present].iter().enumerate() {
            v.scatter_bytes(&mut shuffled[at + k..], n);
        }
    }
    let mut z = ZlibEncoder::new(
        Vec::with_capacity(shuffled.len() / 4),
        Compression::new(u32::from(level)),
    );
    z.write_all(&shuffled)?;
    z.finish()
}

/// A whole block of frames of one dataset, ready to be cut into chunks.
pub(super) struct Block<'a, T> {
    /// Whole frames, at most `shape.frames`, of `width` items of `shape.inner` values.
    pub values: &'a [T],
    pub width: usize,
    pub shape: ChunkShape,
}

impl<T: ChunkValue> Block<'_, T> {
    /// The block's chunks, in order along the items, each encoded by [`encode_chunk`] on
    /// the `rayon` pool.
    pub fn encode(&self, level: u8) -> std::io::Result<Vec<Vec<u8>>> {
        debug_assert_eq!(self.values.len() % (self.width * self.shape.inner), 0);
        (0..self.width.div_ceil(self.shape.items))
            .into_par_iter()
            .map(|c| {
                encode_chunk(
                    self.values,
                    self.width,
                    self.shape,
                    c * self.shape.items,
                    level,
                )
            })
            .collect()
    }
}

/// Writes a block's encoded `chunks` ([`Block::encode`]) at frame `at`, a multiple of
/// `shape.frames`, into `ds` (already resized to hold them).
pub(super) fn write_chunks(
    ds: &Dataset,
    shape: ChunkShape,
    at: usize,
    chunks: &[Vec<u8>],
) -> hdf5::Result<()> {
    debug_assert_eq!(
        at % shape.frames,
        0,
        "a whole chunk starts at a chunk boundary"
    );
    for (c, bytes) in chunks.iter().enumerate() {
        let offset: [hdf5_sys::h5::hsize_t; 3] = [at as u64, (c * shape.items) as u64, 0];
        hdf5::sync::sync(|| {
            // SAFETY: `ds.id()` is an open dataset (`ds` holds it) of rank 3, so the library
            // reads exactly three offsets from `offset`, which lives across the call;
            // `bytes` is a live buffer of `bytes.len()` bytes that the library only reads
            // (it copies them to the file before returning). A filter mask of 0 says every
            // filter of the dataset's pipeline (shuffle, deflate) was applied, as
            // `encode_chunk` does. The call runs under the library's lock (`sync`), as
            // every call of `hdf5-metno` does.
            let status = unsafe {
                hdf5_sys::h5d::H5Dwrite_chunk(
                    ds.id(),
                    hdf5_sys::h5p::H5P_DEFAULT,
                    0,
                    offset.as_ptr(),
                    bytes.len(),
                    bytes.as_ptr().cast(),
                )
            };
            hdf5::h5check(status).map(|_| ())
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::ZlibDecoder;
    use std::io::Read;

    fn unshuffle(bytes: &[u8], size: usize) -> Vec<u8> {
        let n = bytes.len() / size;
        let mut out = vec![0u8; bytes.len()];
        for e in 0..n {
            for b in 0..size {
                out[e * size + b] = bytes[b * n + e];
            }
        }
        out
    }

    /// A chunk inflates, unshuffles and reads back as its values in C order, zeros past
    /// the last item.
    #[test]
    fn a_chunk_holds_its_values_shuffled_and_deflated() {
        let (frames, width, inner) = (3, 5, 2);
        let block: Vec<f32> = (0..frames * width * inner)
            .map(|i| i as f32 + 0.5)
            .collect();
        let shape = ChunkShape {
            frames,
            items: 2,
            inner,
        };
        // The last chunk holds item 4 and a padded item 5.
        let z = encode_chunk(&block, width, shape, 4, 1).unwrap();
        let mut raw = Vec::new();
        ZlibDecoder::new(&z[..]).read_to_end(&mut raw).unwrap();
        let values: Vec<f32> = unshuffle(&raw, 4)
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        let mut expected = Vec::new();
        for f in 0..frames {
            expected.extend_from_slice(&block[(f * width + 4) * inner..(f * width + 5) * inner]);
            expected.extend_from_slice(&[0.0, 0.0]);
        }
        assert_eq!(values, expected);
    }
}
