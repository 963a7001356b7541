# Loaded by `sidekiq -r` in test/clients/sidekiq.test.ts: Sidekiq 6 (Debian's ruby-sidekiq), unchanged,
# through the proxy (REDIS_URL). Each job records its one successful run in the hash `jobs:done`
# (HINCRBY: a job run twice shows 2); jobs whose id is listed in `jobs:flaky` fail on their first
# attempt and are retried by Sidekiq's own retry set.
require 'sidekiq'

Sidekiq.configure_server do |config|
  config.redis = { url: ENV.fetch('REDIS_URL') }
  # The retry set is polled every second (default: 5 s × processes, after a 10 s initial wait).
  Sidekiq.options[:poll_interval_average] = 1
end

class RecordJob
  include Sidekiq::Worker
  sidekiq_options retry: 5
  sidekiq_retry_in { |_count, _exception| 1 }

  def perform(id, queue)
    Sidekiq.redis do |r|
      if r.sismember('jobs:flaky', id) && r.hincrby('jobs:attempts', id, 1) == 1
        raise "job #{id} fails on its first attempt (the test wants it retried)"
      end
      r.hincrby('jobs:done', id, 1)
      r.rpush("jobs:order:#{queue}", id)
    end
  end
end
