import InternalProtocol

/// files-service's errors: the contract's §4 codes, with statuses that fit them.
package enum FileError {
    /// 4000, 403: the caller may not do this to this file or directory.
    package static func noPermission(_ operation: String, path: String) -> ErrorEnvelope {
        // `operation` is `read`, `write`, `delete` or `change the permissions of`.
        ErrorEnvelope(code: 4000, message: "User has no permission to \(operation) '/\(path)'", status: 403)
    }

    /// 6000, 404: nothing at the path.
    package static func notFound(_ path: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6000, message: "File or directory '/\(path)' cannot be found", status: 404)
    }

    /// 6003, 409: a file exists at the path and the request does not allow overwriting it (the
    /// request is well formed; the tree's state refuses it).
    package static func alreadyExists(_ path: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 6003, message: "File '/\(path)' already exists and overwrite is not allowed", status: 409)
    }

    /// 6003, 409: a file stands where the path needs a directory, or a directory where it
    /// needs a file.
    package static func kindConflict(_ path: String, expected: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6003, message: "'/\(path)' already exists and is not a \(expected)", status: 409)
    }

    /// 6007, 404: the source of a copy, move or rename does not exist.
    package static func sourceNotFound(_ path: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6007, message: "The specified resource '/\(path)' was not found", status: 404)
    }

    /// 6018, 409: the destination of a copy, move or rename exists.
    package static func targetExists(_ path: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6018, message: "The target '/\(path)' already exists", status: 409)
    }

    /// 6016, 400: a base64 payload over the limit.
    package static func payloadTooLarge(limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(code: 6016, message: "The byte array payload is larger than \(limit) bytes", status: 400)
    }

    /// 6028, 400: a required parameter is missing or empty.
    package static func missingParameter(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6028, message: "Parameter '\(name)' cannot be null", status: 400)
    }

    /// 6032, 400: an upload's source URL is not one the service fetches (our code: the
    /// contract has none).
    package static func sourceURLRefused(_ reason: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6032, message: "The source URL is refused: \(reason)", status: 400)
    }

    /// 6032, 400: an upload's source could not be reached, or may not be: a host or port the
    /// service does not fetch from, a name that does not resolve, a refused or reset connection,
    /// a timeout. One answer for all, so uploads cannot probe which ports are open.
    package static let sourceUnreachable = ErrorEnvelope(
        code: 6032, message: "The source URL is refused or cannot be reached", status: 400)

    /// 6033, 502: an upload's source answered, but not with its bytes (our code).
    package static func sourceURLFailed(_ reason: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6033, message: "The source URL could not be fetched: \(reason)", status: 502)
    }

    /// 6043, 400: a file-field request names a column that is not `FILE_REF` (our code).
    package static func notAFileField(_ column: String, table: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 6043, message: "'\(column)' of table '\(table)' is not a FILE_REF column", status: 400)
    }

    /// 8010, 400: the request lacks a field it needs (a multipart body without `file`).
    package static func missingField(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 8010, message: "The request is missing the field '\(name)'", status: 400)
    }

    /// 400: a body that is not what the route takes.
    package static func invalidBody(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 8011, message: message, status: 400)
    }
}
