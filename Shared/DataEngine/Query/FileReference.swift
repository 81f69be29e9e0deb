import InternalProtocol

/// `FILE_REF` values: the path of a file in the app's tree, stored normalised as files-service
/// keys it, answered as the file's absolute URL (``FileLinks``).
enum FileReference {
    /// The stored form of `text` (a path or a URL of a file, ``FilePath/init(fileReference:)``).
    static func path(_ text: String) -> String? {
        FilePath(fileReference: text)?.description
    }

    /// Whether `table` has a `FILE_REF` column, whose values would answer differently per client.
    static func hasColumns(in table: TableSchema) -> Bool {
        table.columns.contains { $0.type == .fileReference }
    }

    /// Runs `body` with `FILE_REF` values rendered as paths, whoever the request is for: for
    /// what reaches others than the requester (change events), since a URL would carry the
    /// API key the requester addressed the app by.
    static func asPaths<Result>(_ body: () throws -> Result) rethrows -> Result {
        try FileLinks.$base.withValue(nil, operation: body)
    }

    /// Appends the wire value of a `FILE_REF` value that `value` appends (each time it is
    /// called): the URL when file links are bound for the request, else the path.
    static func wire(into sql: inout SQL, _ value: (inout SQL) throws -> Void) rethrows {
        guard let base = FileLinks.base else {
            try value(&sql)
            return
        }
        // Values saved before FILE_REF kept paths may be URLs or start with a slash.
        sql.append("(CASE WHEN ")
        try value(&sql)
        sql.append(" ~ '^https?://' THEN ")
        try value(&sql)
        sql.append(" ELSE ")
        sql.bind(.text(base))
        sql.append(" || data.file_url_path(ltrim(")
        try value(&sql)
        sql.append(", '/')) END)")
    }
}
