import InternalProtocol
import Permissions

/// The permission cells set on paths of one app's tree, as far as a decision needs them.
/// Directories are containers and files assets (S0:2318, S0:2447, S0:2463): a file's own cells
/// are its ACL; the container of a path is the chain of directories above it (for a directory,
/// itself included), where a cell set deeper overrides the same cell set higher up. The nine
/// layers of ``PermissionOracle`` then decide, with the file's owner for the owner layer.
package struct FileRules: Sendable, Equatable {
    /// Cells per path (the root is the empty path).
    package var cells: [FilePath: PermissionMatrix<FileOperation>] = [:]

    /// No cells: everything is allowed (the model's permissive default).
    package init() {}

    /// Whether no cell is set.
    package var isEmpty: Bool { cells.isEmpty }

    /// Whether `caller` may perform `operation` on the entry at `path`.
    package func allows(
        _ caller: PermissionCaller, _ operation: FileOperation, path: FilePath, isDirectory: Bool, ownerID: String?
    ) -> Bool {
        if cells.isEmpty { return true }
        var chain = [FilePath.root] + path.ancestors
        if isDirectory && !path.isRoot { chain.append(path) }
        var container = PermissionMatrix<FileOperation>()
        for directory in chain {
            for cell in cells[directory]?.all ?? [] { container.set(cell.principal, cell.operation, cell.decision) }
        }
        var rules = ContainerPermissions<FileOperation>()
        rules.containers["tree"] = container
        let acl = isDirectory ? PermissionMatrix<FileOperation>() : cells[path] ?? PermissionMatrix<FileOperation>()
        return PermissionOracle.allows(caller, operation, container: "tree", ownerID: ownerID, acl: acl, rules: rules)
    }
}
