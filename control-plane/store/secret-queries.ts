/**
 * Secrets of a server: written encrypted (see `secret-cipher.ts`), listed by
 * name only, decrypted solely for the configuration cache.
 */
import { secretNameSchema, secretValueSchema, type SecretSummary } from './records.js';
import {
  notFound,
  readOperation,
  requireServerId,
  validate,
  writeOperation,
  type StoreContext,
} from './store-context.js';

/** Names and update times of a server's secrets, ordered by name; never values. */
export function listSecrets(context: StoreContext, subdomain: string): Promise<SecretSummary[]> {
  return readOperation(context, `listing secrets of server "${subdomain}"`, async (db) => {
    const serverId = await requireServerId(db, subdomain);
    const rows = await db
      .selectFrom('secrets')
      .select(['name', 'updated_at'])
      .where('server_id', '=', serverId)
      .orderBy('name')
      .execute();
    return rows.map((row) => ({ name: row.name, updatedAt: row.updated_at }));
  });
}

/** Creates or replaces a secret. */
export async function putSecret(
  context: StoreContext,
  subdomain: string,
  name: string,
  value: string,
): Promise<SecretSummary> {
  const validName = validate(secretNameSchema, name, 'secret name');
  const validValue = validate(secretValueSchema, value, `value of secret ${validName}`);
  return writeOperation(
    context,
    `saving secret ${validName} of server "${subdomain}"`,
    { subdomain, kind: 'secrets' },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const updatedAt = context.now();
      const ciphertext = context.cipher.encrypt(serverId, validName, validValue);
      await trx
        .insertInto('secrets')
        .values({ server_id: serverId, name: validName, ciphertext, updated_at: updatedAt })
        .onConflict((conflict) =>
          conflict
            .columns(['server_id', 'name'])
            .doUpdateSet({ ciphertext, updated_at: updatedAt }),
        )
        .execute();
      return { name: validName, updatedAt };
    },
  );
}

/** Deletes a secret; ERR_NOT_FOUND if absent. */
export async function deleteSecret(
  context: StoreContext,
  subdomain: string,
  name: string,
): Promise<void> {
  await writeOperation(
    context,
    `deleting secret ${name} of server "${subdomain}"`,
    { subdomain, kind: 'secrets' },
    async (trx) => {
      const serverId = await requireServerId(trx, subdomain);
      const result = await trx
        .deleteFrom('secrets')
        .where('server_id', '=', serverId)
        .where('name', '=', name)
        .executeTakeFirst();
      if (result.numDeletedRows === 0n) throw notFound(`secret ${name} of server "${subdomain}"`);
    },
  );
}

/** Every secret of a server, decrypted; a wrong master key is ERR_STORE naming the secret. */
export function readSecrets(
  context: StoreContext,
  subdomain: string,
): Promise<Record<string, string>> {
  return readOperation(context, `reading secrets of server "${subdomain}"`, async (db) => {
    const serverId = await requireServerId(db, subdomain);
    const rows = await db
      .selectFrom('secrets')
      .select(['name', 'ciphertext'])
      .where('server_id', '=', serverId)
      .execute();
    const secrets: Record<string, string> = Object.create(null);
    for (const row of rows)
      secrets[row.name] = context.cipher.decrypt(serverId, row.name, row.ciphertext);
    return secrets;
  });
}
