import InternalProtocol
import Permissions
import PropertyBased
import Testing

/// ``PermissionPlan`` against the oracle in memory: over random apps and callers, asking the
/// plan's row layers of an object and falling back to its decision gives the oracle's answer
/// for every object and operation — so pruning ACL look-ups, and refusing or filtering nothing
/// when the plan is constant, never changes a decision.
@Suite struct PermissionPlanTests {
    @Test func thePlanDecidesEveryObjectAsTheOracleDoes() async {
        await propertyCheck(count: 400, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: "A")) {
            facts, caller in
            let scenario = PermissionScenario(facts)
            for operation in PermissionFact.operations {
                let plan = PermissionPlan(PermissionCaller(caller), operation, table: "Doc", rules: scenario.rules)
                for index in 0..<PermissionFact.objectCount {
                    let owner = PermissionCallers.owner(of: index)
                    let planned = Self.evaluate(plan, operation, acl: scenario.acls[index] ?? PermissionCells(), owner: owner)
                    #expect(planned == scenario.allows(caller, operation, object: index, owner: owner), "\(operation) #\(index)")
                }
            }
        }
    }

    @Test func aTableWithoutACLsOrOwnerPolicyHasAConstantPlan() {
        var rules = PermissionRules()
        rules.global.set(.role("NotAuthenticatedUser"), .find, .deny)
        let anonymous = PermissionCaller(userID: nil, customRoles: [], systemRoles: ["NotAuthenticatedUser", "RestUser"])
        let bob = PermissionCaller(userID: "bob", customRoles: ["MyRole"], systemRoles: ["AuthenticatedUser", "RestUser"])
        #expect(PermissionPlan(anonymous, .find, table: "Doc", rules: rules).constantDecision == .deny)
        #expect(PermissionPlan(bob, .find, table: "Doc", rules: rules).constantDecision == .grant)
        rules.owner["doc"] = [.find: .grant]
        #expect(PermissionPlan(bob, .find, table: "Doc", rules: rules).rowLayers == [.owner(userID: "bob", decision: .grant)])
        #expect(PermissionPlan(anonymous, .find, table: "Doc", rules: rules).constantDecision == .deny)
        rules.aclOperations["doc"] = [.find]
        #expect(PermissionPlan(anonymous, .find, table: "Doc", rules: rules).constantDecision == nil)
        #expect(PermissionPlan(anonymous, .update, table: "Doc", rules: rules).constantDecision == .grant)
        rules.tables["doc", default: PermissionCells()].set(.user("bob"), .find, .deny)
        #expect(
            PermissionPlan(bob, .find, table: "Doc", rules: rules).rowLayers == [
                .userACL(userID: "bob"), .roleACL(roles: ["MyRole"]),
            ])
    }

    /// The plan as the SQL filter applies it, over one object in memory.
    static func evaluate(_ plan: PermissionPlan, _ operation: DataOperation, acl: PermissionCells, owner: String?) -> Bool {
        for layer in plan.rowLayers {
            let decision: PermissionDecision? =
                switch layer {
                case .userACL(let user): acl.decision(forUser: user, operation)
                case .roleACL(let roles): acl.decision(forRoles: roles, operation)
                case .owner(let user, let decision): owner == user ? decision : nil
                }
            if let decision { return decision == .grant }
        }
        return plan.fallback == .grant
    }
}
