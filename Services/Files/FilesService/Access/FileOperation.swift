import Permissions

/// What a caller may do with a file or a directory (contract §4's permission names).
package enum FileOperation: String, PermissionOperation, CaseIterable {
    /// Download, list, count, check existence, copy from.
    case read = "READ"
    /// Upload, save, append, create directories, copy, move or rename into.
    case write = "WRITE"
    /// Delete, move or rename away.
    case delete = "DELETE"
    /// Change the permissions of (`PUT files/permissions/…`): the owner and the server-code key
    /// always may; anyone else as the app's rules decide, granted when no rule says otherwise
    /// (Backendless's permissive default).
    case permission = "PERMISSION"
}
