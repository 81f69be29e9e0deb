import InternalProtocol

/// One file or directory of an app's tree, as the catalog keeps it.
package struct FileEntry: Sendable, Equatable {
    /// Where it is.
    package var path: FilePath
    /// Whether it is a directory (which holds entries and has no bytes).
    package var isDirectory: Bool
    /// The byte count (0 for a directory).
    package var size: Int64
    /// The media type recorded at upload.
    package var contentType: String?
    /// The storage object holding a file's bytes; nil for a directory.
    package var storageKey: String?
    /// Creation time, epoch milliseconds.
    package var created: Int64
    /// Last change of the bytes, epoch milliseconds.
    package var updated: Int64
    /// The user who created it, if one was logged in.
    package var ownerId: String?
}

/// A file's new bytes, already stored, for the catalog to record.
struct StoredFile: Sendable {
    /// The storage object.
    let key: String
    /// Its byte count.
    let size: Int64
    /// Its media type.
    let contentType: String
}

/// Which entries a listing or count takes.
struct ListingFilter: Sendable {
    /// A glob on names (`*`, `?`); nil takes every name.
    var pattern: String?
    /// Whether to descend into subdirectories; then only files are listed.
    var recursive = false
    /// With `recursive`, whether a count includes directories too.
    var countDirectories = false
}
