import InternalProtocol

/// The error the data engine and the gateway answer for a denied data operation.
package enum PermissionError {
    /// 1023, HTTP 403: the caller may not perform `operation` on `table` (or, for a single
    /// object, on that object).
    package static func denied(_ operation: String, table: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1023, message: "Permission denied: \(operation) on table '\(table)'", status: 403)
    }
}
