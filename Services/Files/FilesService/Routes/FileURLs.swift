import InternalProtocol

/// The URLs answers carry: where a client downloads a file, under the public base URL and the
/// prefix the client addressed the app by.
struct FileURLs: Sendable {
    /// The gateway's public base URL, without a trailing slash.
    let publicURL: String

    /// The absolute URL of `path` for a client that used `prefix` (`/{appId}/{apiKey}`).
    func url(of path: FilePath, prefix: String) -> String {
        publicURL + prefix + "/files/" + path.urlPath
    }
}
