/// `file.info` (files-service): what an email attachment needs to know about one file before
/// anything is sent — its name, size and media type — read with the call's identity (4000 when
/// it may not read the file, 6000 when there is none, 6006 for a path no file may have).
package enum FileInfo: RPCOperation {
    package static let name = "file.info"
    package static let isIdempotent = true
    package static let callers: Set<ServiceName> = [.messaging]

    /// A file named by its path from the root of the caller's app (a leading `/` is ignored).
    package struct Request: Codable, Sendable, Equatable {
        /// The file's path, not percent-encoded.
        package var path: String
        /// A larger file is refused (6016, 400) before any byte is read.
        package var maximumBytes: Int64?

        /// Names the file at `path`, refused when larger than `maximumBytes`.
        package init(path: String, maximumBytes: Int64? = nil) {
            self.path = path
            self.maximumBytes = maximumBytes
        }
    }

    /// The file as it is now.
    package struct Response: Codable, Sendable, Equatable {
        /// The normalised path, without a leading slash.
        package var path: String
        /// The last name of the path.
        package var name: String
        /// Bytes.
        package var size: Int64
        /// The media type it is served with.
        package var contentType: String

        /// Describes one file.
        package init(path: String, name: String, size: Int64, contentType: String) {
            self.path = path
            self.name = name
            self.size = size
            self.contentType = contentType
        }
    }
}

/// `file.content` (files-service): the bytes of one file the call's identity may read, as the
/// answer's body (with its `content-length`), streamed from storage at the pace the caller
/// reads. The request is a ``FileInfo/Request`` and is refused as that one is.
package enum FileContent {
    /// The operation's path segment.
    package static let name = "file.content"
    /// Only messaging-service reads bytes this way (email attachments).
    package static let callers: Set<ServiceName> = [.messaging]
}
