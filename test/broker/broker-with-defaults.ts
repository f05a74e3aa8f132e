/** A Broker on the configuration table's limits, with a test's own limits merged over them. */
import { Broker, type BrokerOptions } from '../../control-plane/broker/index.js';
import { DEFAULT_BROKER_LIMITS } from '../support/config-defaults.js';

/** Broker options where each limit a test leaves out is the configuration default. */
export interface TestBrokerOptions extends Omit<BrokerOptions, 'http' | 'db'> {
  http?: Partial<BrokerOptions['http']>;
  db?: Partial<BrokerOptions['db']>;
}

/** A Broker whose limits are the configuration defaults, `options.http`/`options.db` over them. */
export function brokerWithDefaults(options: TestBrokerOptions): Broker {
  return new Broker({
    ...options,
    http: { ...DEFAULT_BROKER_LIMITS.http, ...options.http },
    db: { ...DEFAULT_BROKER_LIMITS.db, ...options.db },
  });
}
