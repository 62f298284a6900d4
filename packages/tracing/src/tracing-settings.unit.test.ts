import { describe, expect, it } from 'vitest';
import { exportDestination, serviceNameGiven, tracingRequested } from './tracing-settings.js';

describe('whether a process traces, from OTEL_* as the OpenTelemetry specification reads them', () => {
  it('is off with no OTLP endpoint, whatever else is set', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'issuer', OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
  });

  it('is on with OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
  });

  it('is off with OTEL_SDK_DISABLED=true in any case, and on with any other value of it', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: '1' })).toBe(true);
  });

  it('is off with OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
  });

  it('leaves service.name to OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES when either names it', () => {
    expect(serviceNameGiven({})).toBe(false);
    expect(serviceNameGiven({ OTEL_SERVICE_NAME: 'issuer-eu1' })).toBe(true);
    expect(serviceNameGiven({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=issuer-eu1' })).toBe(true);
    expect(serviceNameGiven({ OTEL_RESOURCE_ATTRIBUTES: 'service.namespace=tessera' })).toBe(false);
  });

  it('names the destination for the log without credentials, with the traces endpoint and protocol first', () => {
    expect(exportDestination({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:secret@collector:4318/?key=secret' })).toEqual({ endpoint: 'https://collector:4318', protocol: 'http/protobuf' });
    expect(
      exportDestination({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      }),
    ).toEqual({ endpoint: 'http://traces:4317', protocol: 'grpc' });
  });
});
