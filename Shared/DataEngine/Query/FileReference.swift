import InternalProtocol

/// `FILE_REF` values: the path of a file in the app's tree, stored normalised as files-service
/// keys it, answered as the file's absolute URL (``FileLinks``).
enum FileReference {
    /// The stored form of `text` (a path or a URL of a file, ``FilePath/init(fileReference:)``).
    static func path(_ text: String) -> String? {
        FilePath(fileReference: text)?.description
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
