import Foundation
import InternalProtocol

/// `FILE_REF` values: the path of a file in the app's tree, stored normalised as files-service
/// keys it, answered as the file's absolute URL (``FileLinks``).
enum FileReference {
    /// The stored form of `text`: a path (`pics/a.png`, a leading slash optional), or a URL of
    /// the file as uploads answer it and finds return it (what follows `/files/` in its path,
    /// percent-decoded). Nil for anything else — no file, or a path files-service refuses.
    static func path(_ text: String) -> String? {
        let path: FilePath?
        if let scheme = text.range(of: "://"), text.hasPrefix("http") {
            let afterHost = text[scheme.upperBound...].drop { $0 != "/" }
            guard let files = afterHost.range(of: "/files/") else { return nil }
            path = try? FilePath(encoded: afterHost[files.upperBound...].prefix { $0 != "?" && $0 != "#" })
        } else {
            path = try? FilePath(decoded: text)
        }
        guard let path, !path.isRoot else { return nil }
        return path.description
    }

    /// Appends the wire value of the `FILE_REF` column `column` (SQL naming it): the URL when
    /// file links are bound for the request, else the path.
    static func wire(_ column: String, into sql: inout SQL) {
        guard let base = FileLinks.base else {
            sql.append(column)
            return
        }
        sql.append("(")
        sql.bind(.text(base))
        sql.append(" || data.file_url_path(\(column)))")
    }
}
