import { existsSync } from 'node:fs';

/**
 * A Kafka broker in a container, for machines with a Docker engine but no Java. Loaded only
 * there: testcontainers is imported lazily, so the JVM path and the skip path never touch it.
 * cp-kafka 7.9 is Apache Kafka 3.9, the version infra/kafka pins for kafkajs 2.2.4.
 */
export const kafkaImage = 'confluentinc/cp-kafka:7.9.0';

export function dockerEngineLikely(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

export async function startKafkaContainer(): Promise<{ bootstrap: string; stop: () => Promise<void> }> {
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const container = await new KafkaContainer(kafkaImage).withKraft().start();
  return {
    bootstrap: `${container.getHost()}:${container.getMappedPort(9093)}`,
    stop: async () => {
      await container.stop();
    },
  };
}
