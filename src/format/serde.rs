//! `Serialize` and `Deserialize` (the `serde` feature): a filter, or a
//! growable filter, is serialized as its byte string.

use crate::error::DecodeError;
use crate::format::HasherIdentity;
use crate::hasher::DefaultHashBuilder;
use crate::{CuckooFilter, GrowableCuckooFilter};
use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;

/// Serializes the filter as one byte string, [`to_bytes`](CuckooFilter::to_bytes).
impl<S: HasherIdentity> Serialize for CuckooFilter<S> {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

/// Deserializes a byte string (or a sequence of bytes, for formats without
/// byte strings) with [`from_bytes`](CuckooFilter::from_bytes).
///
/// ```
/// use lockfree_cuckoo_filter::CuckooFilter;
/// use serde::de::value::{BytesDeserializer, Error};
/// use serde::Deserialize;
///
/// let f = CuckooFilter::with_capacity(100);
/// f.insert("apple")?;
/// // What `Serialize` writes: the byte string of `to_bytes`.
/// let bytes = f.to_bytes();
/// let g = CuckooFilter::deserialize(BytesDeserializer::<Error>::new(&bytes))?;
/// assert!(g.contains("apple"));
/// assert!(CuckooFilter::deserialize(BytesDeserializer::<Error>::new(&bytes[1..])).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<'de> Deserialize<'de> for CuckooFilter<DefaultHashBuilder> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(BytesVisitor(CuckooFilter::from_bytes))
    }
}

/// Serializes the filter as one byte string,
/// [`to_bytes`](GrowableCuckooFilter::to_bytes).
impl<S: HasherIdentity> Serialize for GrowableCuckooFilter<S> {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

/// Deserializes a byte string (or a sequence of bytes) with
/// [`from_bytes`](GrowableCuckooFilter::from_bytes).
///
/// ```
/// use lockfree_cuckoo_filter::GrowableCuckooFilter;
/// use serde::de::value::{BytesDeserializer, Error};
/// use serde::Deserialize;
///
/// let f = GrowableCuckooFilter::with_capacity(100);
/// f.insert("apple")?;
/// let bytes = f.to_bytes();
/// let g = GrowableCuckooFilter::deserialize(BytesDeserializer::<Error>::new(&bytes))?;
/// assert!(g.contains("apple"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<'de> Deserialize<'de> for GrowableCuckooFilter<DefaultHashBuilder> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(BytesVisitor(GrowableCuckooFilter::from_bytes))
    }
}

/// Accepts the byte string (or a sequence of bytes) and decodes it.
struct BytesVisitor<T>(fn(&[u8]) -> Result<T, DecodeError>);

impl<'de, T> Visitor<'de> for BytesVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a cuckoo filter")
    }

    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        (self.0)(v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // The hint is the input's claim: trust it only so far.
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        self.visit_bytes(&bytes)
    }
}
