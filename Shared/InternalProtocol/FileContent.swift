/// `file.info` (files-service): what an email attachment needs to know about one file before
/// anything is sent — its name, size and media type — read with the call's identity (4000 when
/// it may not read the file, 6000 when there is none, 6006 for a path no file may have).
public enum FileInfo: RPCOperation {
    public static let name = "file.info"
    public static let isIdempotent = true
    public static let callers: Set<ServiceName> = [.messaging]

    /// A file named by its path from the root of the caller's app (a leading `/` is ignored).
    public struct Request: Codable, Sendable, Equatable {
        /// The file's path, not percent-encoded.
        public var path: String
        /// A larger file is refused (6016, 400) before any byte is read.
        public var maximumBytes: Int64?

        /// Names the file at `path`, refused when larger than `maximumBytes`.
        public init(path: String, maximumBytes: Int64? = nil) {
            self.path = path
            self.maximumBytes = maximumBytes
        }
    }

    /// The file as it is now.
    public struct Response: Codable, Sendable, Equatable {
        /// The normalised path, without a leading slash.
        public var path: String
        /// The last name of the path.
        public var name: String
        /// Bytes.
        public var size: Int64
        /// The media type it is served with.
        public var contentType: String

        /// Describes one file.
        public init(path: String, name: String, size: Int64, contentType: String) {
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
public enum FileContent {
    /// The operation's path segment.
    public static let name = "file.content"
    /// Only messaging-service reads bytes this way (email attachments).
    public static let callers: Set<ServiceName> = [.messaging]
}
