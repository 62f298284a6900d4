import { readFileSync } from 'node:fs';
import kafkajs from 'kafkajs';

export type AclOperation = 'READ' | 'WRITE' | 'DESCRIBE' | 'CREATE' | 'DESCRIBE_CONFIGS';

export interface AclGrant {
  /** `User:<name>`. */
  readonly principal: string;
  readonly resource: 'topic' | 'group';
  /** A literal name, or with `prefixed` every name that starts with it. */
  readonly name: string;
  readonly prefixed?: boolean;
  readonly operations: readonly AclOperation[];
}

/** How to reach a secured broker as its admin user (a super user), over SASL_SSL. */
export interface AdminLogin {
  readonly saslSslBootstrap: string;
  readonly caFile: string;
  readonly admin: { readonly username: string; readonly password: string };
}

/** Allows what the grants say, as the admin user; what no ACL allows stays denied. */
export async function grantAcls(broker: AdminLogin, grants: readonly AclGrant[]): Promise<void> {
  const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;
  const admin = new kafkajs.Kafka({
    clientId: 'tessera-acls',
    brokers: [broker.saslSslBootstrap],
    ssl: { ca: readFileSync(broker.caFile, 'utf8') },
    sasl: { mechanism: 'scram-sha-512', username: broker.admin.username, password: broker.admin.password },
    logLevel: kafkajs.logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await admin.createAcls({
      acl: grants.flatMap((grant) =>
        grant.operations.map((operation) => ({
          principal: grant.principal,
          host: '*',
          operation: AclOperationTypes[operation],
          permissionType: AclPermissionTypes.ALLOW,
          resourceType: grant.resource === 'topic' ? AclResourceTypes.TOPIC : AclResourceTypes.GROUP,
          resourceName: grant.name,
          resourcePatternType: grant.prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
        })),
      ),
    });
  } finally {
    await admin.disconnect();
  }
}
