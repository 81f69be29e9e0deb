import DataAPI
import DataEngine
import InternalProtocol
import PostgresSupport
import ServiceRuntime

extension GeoRoutes {
    /// Category permissions (``ContainerPermissionRoutes``) under `geo/categories/{name}/permissions`,
    /// FIND / ADD / REMOVE per user, role and owner policy; category `*` is the global matrix.
    static func permissionRoutes(store: GeoStore, rules: CategoryRulesCache) -> ContainerPermissionRoutes<GeoOperation>
    {
        ContainerPermissionRoutes(
            path: "geo/categories", parameter: "name", options: options, table: store.categoryRuleTable,
            ownerPolicy: true,
            refusals: .init(
                invalidBody: GeoError.invalidBody,
                serverCodeRequired: GeoError.serverCodeRequired("Changing category permissions")),
            containerName: { name throws(ErrorEnvelope) in try GeoCategoryName.normalized(name) },
            changed: { app in await rules.invalidate(app) })
    }
}
