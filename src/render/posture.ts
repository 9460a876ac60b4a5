// The security posture memory is told of (docs/api.md, "Posture env and `maxReadScope: user`"):
// with security enabled a memory service requires a verified agent identity on each call, and with
// the user plane too a user principal. The same two facts for an Agent's memory client
// (`MEMORY_…`) and for a MemoryStore's service (`KAOS_MEMORY_…`); nothing without security.
import { securityEnabled, userIdentityEnforced, type SecurityConfig } from '../config/security.ts';
import { env } from './container.ts';
import type { EnvVar } from './k8s.ts';

export function memoryPostureEnv(prefix: '' | 'KAOS_', security: SecurityConfig): EnvVar[] {
  return [
    ...(userIdentityEnforced(security) ? [env(`${prefix}MEMORY_REQUIRE_PRINCIPAL`, 'true')] : []),
    ...(securityEnabled(security) ? [env(`${prefix}MEMORY_REQUIRE_AGENT_IDENTITY`, 'true')] : []),
  ];
}
