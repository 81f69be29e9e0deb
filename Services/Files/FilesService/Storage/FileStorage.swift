import NIOCore

/// Where file bytes live. Each stored object is immutable and named by a key the service
/// generates (never by a client's path), inside the app's own space; a new version of a file
/// is a new object, so a reader never sees a torn or partial file.
package protocol FileStorage: Sendable {
    /// Stores `body` as object `key` of `app`: visible only once complete and durable, nothing
    /// left behind when `body` fails. Answers the byte count.
    func write<Body: AsyncSequence>(_ body: Body, app: String, key: String) async throws -> Int64
    where Body.Element == ByteBuffer

    /// Stores the bytes of objects `sources`, one after another, as object `key` (a copy, an
    /// append), with the same guarantees as ``write(_:app:key:)``. Answers the byte count.
    func compose(app: String, sources: [String], key: String) async throws -> Int64

    /// Hands the bytes of `range` of object `key` to `consume` as they are read, waiting for
    /// each call to return before reading on.
    func read(
        app: String, key: String, range: Range<Int64>, into consume: (ByteBuffer) async throws -> Void
    ) async throws

    /// Removes object `key`; removing a missing object is not an error.
    func delete(app: String, key: String) async throws

    /// Where object `key` lies relative to a local root another process may read (the
    /// gateway sends such files itself); nil for storage that is not a local directory.
    func localLocation(app: String, key: String) -> String?
}

extension FileStorage {
    package func localLocation(app: String, key: String) -> String? { nil }
}

/// Names of stored objects.
enum StorageKey {
    /// A new object key: 128 random bits as 32 lower-case hex digits.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
