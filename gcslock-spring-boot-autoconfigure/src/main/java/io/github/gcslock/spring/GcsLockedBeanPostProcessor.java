package io.github.gcslock.spring;

import org.springframework.aop.Advisor;
import org.springframework.aop.TargetSource;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AdvisedSupport;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.Ordered;

/**
 * Applies the {@link GcsLocked} advisor to every bean that has an annotated method, the way
 * {@code @Async} and {@code @Validated} apply theirs: with its own post-processor, so that the
 * annotation works whether or not the application has an auto-proxy creator
 * ({@code spring.aop.auto=false} and no {@code @EnableTransactionManagement} leave it without one; an
 * advisor bean alone would then be ignored and the method would run unlocked, silently).
 *
 * <p>A bean that another post-processor already proxied (an auto-proxy creator for
 * {@code @Transactional}, {@code @Async}'s post-processor) gets the advisor added to that proxy, at the
 * place its {@link Ordered order} gives among the advisors there — outside {@code @Transactional}, inside
 * {@code @Async} — and never twice: no proxy of a proxy, no second lock interceptor.
 */
public class GcsLockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    /** @param advisor the {@link GcsLocked} advisor (pointcut and interceptor) to apply; its order places it among others */
    public GcsLockedBeanPostProcessor(Advisor advisor) {
        this.advisor = advisor;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (this.advisor == null || bean instanceof AopInfrastructureBean) {
            return bean;
        }
        if (bean instanceof Advised advised && !advised.isFrozen() && isEligible(AopUtils.getTargetClass(bean))) {
            for (Advisor existing : advised.getAdvisors()) {
                if (existing == this.advisor) {
                    return bean; // already applied to this proxy
                }
            }
            advised.addAdvisor(positionIn(advised), this.advisor);
            return bean;
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    /** Index before the first advisor with a lower precedence than ours: the chain runs from index 0 inwards. */
    private int positionIn(Advised advised) {
        Advisor[] chain = advised.getAdvisors();
        int ours = orderOf(this.advisor);
        int position = chain.length;
        for (int i = 0; i < chain.length; i++) {
            if (orderOf(chain[i]) > ours) {
                position = i;
                break;
            }
        }
        TargetSource target = advised.getTargetSource();
        if (position == chain.length && target == AdvisedSupport.EMPTY_TARGET_SOURCE && chain.length > 0) {
            position--; // a proxy without a target: its last advisor does the work and must stay last
        }
        return position;
    }

    private static int orderOf(Advisor advisor) {
        return advisor instanceof Ordered ordered ? ordered.getOrder() : Ordered.LOWEST_PRECEDENCE;
    }
}
