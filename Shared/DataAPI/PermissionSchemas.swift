import InternalProtocol
import ServiceRuntime

/// The named schemas of permission answers, shared by data's table and object permissions and
/// every container kind's (``ContainerPermissionRoutes``), which answer cells of one shape.
package enum PermissionSchemas {
    /// `PermissionCell`: one granted or denied operation, for a user or a role (neither in an
    /// owner-policy cell).
    package static let cell = APISchema.object(
        [
            "user": APISchema.string.described("The user's id, or * for every user"),
            "role": APISchema.string.described("The role's name, or * for every role"),
            "permission": APISchema.string.described("The operation, such as FIND"),
            "access": APISchema.choice(["GRANT", "DENY"]),
        ], required: ["permission", "access"])

    /// `PermissionRules`: a container's cells and its owner policy.
    package static let rules = APISchema.object(
        [
            "permissions": .array(.ref("PermissionCell")),
            "owner": APISchema.array(.ref("PermissionCell")).described("The owner policy: cells without user or role"),
        ], required: ["permissions", "owner"])

    /// Every permission schema by name.
    package static let all: [String: APISchema] = ["PermissionCell": cell, "PermissionRules": rules]

}
