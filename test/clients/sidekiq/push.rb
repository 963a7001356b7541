# Pushes the jobs of test/clients/sidekiq.test.ts with Sidekiq's own client, through the proxy.
# Usage: REDIS_URL=redis://127.0.0.1:PORT ruby push.rb COUNT FLAKY
require 'sidekiq'
require_relative 'worker'

Sidekiq.configure_client { |config| config.redis = { url: ENV.fetch('REDIS_URL') } }
count = Integer(ARGV[0])
flaky = Integer(ARGV[1])
Sidekiq.redis { |r| r.sadd?('jobs:flaky', (0...flaky).map { |i| "j#{i * 7}" }) }
ids = (0...count).map { |i| "j#{i}" }
critical, default = ids.partition.with_index { |_, i| i.even? }
Sidekiq::Client.push_bulk('class' => RecordJob, 'queue' => 'critical', 'args' => critical.map { |id| [id, 'critical'] })
# One by one too: Sidekiq::Client.push (a MULTI per job).
default.each { |id| RecordJob.set(queue: 'default').perform_async(id, 'default') }
puts "pushed #{count}"
